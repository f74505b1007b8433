package traces

import "testing"

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
