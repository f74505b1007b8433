package decimal

import "testing"

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Number
		ok   bool
	}{
		{"12", Number{Mant: 12}, true},
		{"-0.4", Number{Neg: true, Mant: 4, Exp: -1}, true},
		{"+1.5e3", Number{Mant: 15, Exp: 2}, true},
		{".5", Number{Mant: 5, Exp: -1}, true},
		{"5.", Number{Mant: 5}, true},
		{"0.000", Number{Mant: 0, Exp: -3}, true},
		{"1E-2", Number{Mant: 1, Exp: -2}, true},
		{"12345678901234567890", Number{Mant: 1234567890123456789, Exp: 1}, true},
		{"12345678901234567891", Number{Mant: 1234567890123456789, Exp: 1, Lost: true}, true},
		{"100000000000000000000", Number{Mant: 1000000000000000000, Exp: 2}, true},
		{"1e1001", Number{Mant: 1, Exp: 1001, Huge: true}, true},
		{"", Number{}, false},
		{"-", Number{}, false},
		{".", Number{}, false},
		{"1e", Number{}, false},
		{"1e+", Number{}, false},
		{"1.2.3", Number{}, false},
		{"0x10", Number{}, false},
		{"1 ", Number{}, false},
		{"inf", Number{}, false},
	} {
		got, ok := Parse(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if gb, okb := Parse([]byte(tt.in)); gb != got || okb != ok {
			t.Errorf("Parse([]byte(%q)) differs from Parse(string)", tt.in)
		}
	}
}
