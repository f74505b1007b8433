package traces

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// timeWriterJSON is a TimeWriter as JSON: its unit, layout and zone. The
// zone is its name when it is one of the zone database's (or UTC or
// Local), else a fixed zone of that abbreviation and offset, as parsing a
// time with a numeric offset makes.
type timeWriterJSON struct {
	Unit   int64  `json:"unit"`
	Layout string `json:"layout,omitempty"`
	Zone   string `json:"zone,omitempty"`
	Abbr   string `json:"abbr,omitempty"`
	Offset int    `json:"offset,omitempty"`
}

// MarshalJSON writes the TimeWriter, so that a report merged elsewhere
// from the partial results of a trace writes times as the trace does.
func (w TimeWriter) MarshalJSON() ([]byte, error) {
	j := timeWriterJSON{Unit: int64(w.unit), Layout: w.layout}
	if w.loc != nil {
		j.Zone = w.loc.String()
		j.Abbr, j.Offset = time.Unix(0, 0).In(w.loc).Zone()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a TimeWriter that MarshalJSON wrote.
func (w *TimeWriter) UnmarshalJSON(data []byte) error {
	var j timeWriterJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	if j.Unit < 0 {
		return fmt.Errorf("traces: a time writer's unit must not be negative, got %d", j.Unit)
	}
	*w = TimeWriter{unit: time.Duration(j.Unit), layout: j.Layout}
	switch {
	case j.Layout == "" && j.Zone == "":
	case j.Zone == "UTC":
		w.loc = time.UTC
	case j.Zone == "Local":
		w.loc = time.Local
	case j.Zone != "" && j.Zone != j.Abbr || strings.Contains(j.Zone, "/"):
		loc, err := time.LoadLocation(j.Zone)
		if err != nil {
			return fmt.Errorf("traces: time zone %q: %w", j.Zone, err)
		}
		w.loc = loc
	default:
		w.loc = time.FixedZone(j.Abbr, j.Offset)
	}
	return nil
}
