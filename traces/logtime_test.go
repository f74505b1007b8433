package traces

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestLogClockISOMinutes checks that times read after another of the
// same minute and zone, whose seconds alone are read, read as a time
// read alone does: fractions of every length, the last second of a
// minute, a leap second, a fraction finer than a nanosecond, another
// zone, and the ends of the range.
func TestLogClockISOMinutes(t *testing.T) {
	texts := []string{
		"2024-10-10T13:55:36Z",
		"2024-10-10T13:55:37.5Z",
		"2024-10-10T13:55:59.999999999Z",
		"2024-10-10T13:55:00.000000001Z",
		"2024-10-10T13:55:01.1234567891Z", // finer than a nanosecond
		"2024-10-10T13:55:60Z",            // not a leap second
		"2024-10-10T13:55:61Z",
		"2024-10-10T13:55:3Z",
		"2024-10-10T13:55:36.Z",
		"2024-10-10T13:55:36z",
		"2024-10-10T13:55:36+02:00",
		"2024-10-10T13:55:36+02:00x",
		"2024-10-10T13:55:36+02:0",
		"2024-10-10T13:55:36+02:00",
		"2024-10-10T13:55:36.25-01:30",
		"2024-10-10T13:55:36.25+02:00",
		"2024-10-10T13:55:36",
		"2016-12-31T23:59:59Z",
		"2016-12-31T23:59:60Z", // a leap second
		"2016-12-31T23:59:30.5Z",
		"2262-04-11T23:47:16.854775807Z", // the last nanosecond of int64
		"2262-04-11T23:47:15Z",
		"2262-04-11T23:47:17Z",
		"1677-09-21T00:12:43.145224192Z", // the first
		"1677-09-21T00:12:44Z",
		"1677-09-21T00:12:42Z",
		"2024-10-10 13:55:36Z",
		"2024-10-10t13:55:36.7Z",
	}
	for _, round := range []bool{false, true} {
		c := common{}
		c.init("t.log", 1)
		c.tf.round = round
		var lc logClock
		for _, text := range texts {
			want, e, _ := parseRFC3339([]byte(text), nil, round)
			got, err := lc.parse(&c, timeISO, []byte(text), 1, 1)
			if (e == numOK) != (err == nil) || e == numOK && got != want {
				t.Errorf("round %v: %s: read %d, %v after the times before it; alone %d, %v", round, text, got, err, want, e)
			}
		}
	}
}

// TestLogClockEpochSeconds checks that arrivals written as seconds since
// the epoch, whose seconds' digits are those of the arrival before when
// it is in the same second, are AppendDecimal's text: in one second and
// the next, back, at 0, before 1970 and at the ends of the range.
func TestLogClockEpochSeconds(t *testing.T) {
	var c common
	c.init("x.log", time.Second)
	var lc logClock
	ns := []int64{
		0, 1, 999_999_999, 1e9, 1e9 + 1, 1728561336_020000000, 1728561336_457000000, 1728561336_000000000,
		1728561337_000000001, 1728561335_999999999, 1728561336_5, -1, -1e9, -1e9 - 1, 0, 5,
		math.MaxInt64, math.MaxInt64 - 1, math.MinInt64, math.MinInt64 + 1, 9_000_000_000,
	}
	rng := rand.New(rand.NewPCG(5, 6))
	at := int64(1728561336_000000000)
	for range 2000 {
		at += rng.Int64N(60_000_000)
		ns = append(ns, at)
	}
	for _, v := range ns {
		got := string(lc.format(&c, timeEpoch, v, nil))
		if want := string(AppendDecimal(nil, v, time.Second)); got != want {
			t.Fatalf("%d: %q, want %q", v, got, want)
		}
	}
}
