#include "textflag.h"

// MASK compares the block in X0-X3 with the byte pattern in pat and
// writes the 64-bit mask of the bytes equal to it at off(DI).
#define MASK(pat, off) \
	MOVOU X0, X4; PCMPEQB pat, X4; PMOVMSKB X4, AX; \
	MOVOU X1, X5; PCMPEQB pat, X5; PMOVMSKB X5, BX; \
	MOVOU X2, X6; PCMPEQB pat, X6; PMOVMSKB X6, DX; \
	MOVOU X3, X7; PCMPEQB pat, X7; PMOVMSKB X7, R8; \
	SHLQ $16, BX; ORQ BX, AX; \
	SHLQ $32, DX; ORQ DX, AX; \
	SHLQ $48, R8; ORQ R8, AX; \
	MOVQ AX, off(DI)

// func blocksSSE2(p *byte, n int, pats *[2][16]byte, out *uint64)
TEXT ·blocksSSE2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ pats+16(FP), R9
	MOVQ out+24(FP), DI
	MOVOU 0(R9), X8
	MOVOU 16(R9), X9
	TESTQ CX, CX
	JZ done
loop:
	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	MASK(X8, 0)
	MASK(X9, 8)
	ADDQ $64, SI
	ADDQ $16, DI
	DECQ CX
	JNZ loop
done:
	RET
