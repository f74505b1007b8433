package cmd

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/tables"
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
// interval at which a limiter lets requests through in the long run
// (tables.ResolutionWarning).
func (rp *replay) warnResolution(w io.Writer) {
	res, name := rp.trace.set.Resolution()
	if msg := tables.ResolutionWarning(rp.spec.Lanes, name, res); msg != "" {
		warnf(w, "%s", msg)
	}
}
