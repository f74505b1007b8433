#include "textflag.h"

// func lines(first, last uintptr)
TEXT ·lines(SB), NOSPLIT|NOFRAME, $0-16
	MOVD first+0(FP), R0
	MOVD last+8(FP), R1
loop:
	PRFM (R0), PLDL1KEEP
	ADD $64, R0
	CMP R1, R0
	BLS loop
	RET
