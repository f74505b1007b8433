#include "textflag.h"

// func lines(first, last uintptr)
TEXT ·lines(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ first+0(FP), AX
	MOVQ last+8(FP), BX
loop:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, BX
	JLS loop
	RET
