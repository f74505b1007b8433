package cmd

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// addLabelFlags adds the flags that say who is legitimate to a command
// that counts it.
func addLabelFlags(fs *pflag.FlagSet, o *traceOptions) {
	o.labels = &traces.LabelFlags{}
	o.labels.AddFlags(fs)
}

// labelled reports whether --legit, --abusive or --labels is given.
func (o *traceOptions) labelled() bool { return o.labels.Given() }

// labelConfig has cfg label its requests with l, when there is one.
func labelConfig(cfg *sim.Config, l *traces.Labeler) {
	if l == nil {
		return
	}
	cfg.Labels = traces.NumLabels
	cfg.Label = func(ev *traces.Event, key []byte) (uint8, error) {
		lab, err := l.Label(ev, key)
		return uint8(lab), err
	}
}

// warnResolution warns when the times of a log are coarser than the
// interval at which a limiter lets requests through in the long run (its
// emission interval): the requests of one tick of the log's clock then
// come at once, and the limiter refuses more of them than it would at
// their own times (CLF's whole seconds against 10r/s).
func (rp *replay) warnResolution(w io.Writer) {
	res, name := rp.trace.set.Resolution()
	if res == 0 {
		return
	}
	coarse := sweep.FinerThan(rp.spec.Lanes, res)
	if len(coarse) == 0 {
		return
	}
	if len(coarse) > 3 {
		coarse = append(coarse[:3], fmt.Sprintf("%d more", len(coarse)-3))
	}
	warnf(w, "the times of %s are whole multiples of %v, coarser than the time between two requests a limiter lets through at its rate (its emission interval), %s: the requests of one step arrive at once, and it refuses more of them than it would at their own times; log times with milliseconds (nginx's $msec) to replay them as they came",
		name, res, render.JoinList(coarse, "and"))
}
