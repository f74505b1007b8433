package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ratesim/ratesim/internal/render"
	"github.com/ratesim/ratesim/internal/sweep"
	"github.com/ratesim/ratesim/sim"
	"github.com/ratesim/ratesim/traces"
)

// logOptions resolves --format, --log-format, --envoy-format and
// --time-is: a line format implies the format that takes it.
func (o *traceOptions) logOptions() (traces.Format, string, traces.TimeIs, error) {
	format, err := parseTraceFormat(o.Format)
	if err != nil {
		return 0, "", 0, err
	}
	timeIs, err := traces.ParseTimeIs(o.TimeIs)
	if err != nil {
		return 0, "", 0, usageErrorf("invalid --time-is %q (valid: %s)", o.TimeIs, traces.TimeIsChoices)
	}
	switch {
	case o.LogFormat != "" && o.EnvoyFormat != "":
		return 0, "", 0, usageErrorf("--log-format (nginx) and --envoy-format exclude each other")
	case o.LogFormat != "":
		if format == traces.FormatAuto {
			format = traces.Nginx
		}
		if format != traces.Nginx {
			return 0, "", 0, usageErrorf("--log-format is an nginx log_format: it goes with --format nginx, not %s", format)
		}
		return format, o.LogFormat, timeIs, nil
	case o.EnvoyFormat != "":
		if format == traces.FormatAuto {
			format = traces.Envoy
		}
		if format != traces.Envoy {
			return 0, "", 0, usageErrorf("--envoy-format goes with --format envoy, not %s", format)
		}
		return format, o.EnvoyFormat, timeIs, nil
	}
	return format, "", timeIs, nil
}

// labelOptions are --legit, --abusive and --labels: who sent a request.
type labelOptions struct {
	Legit, Abusive, Column string
}

// addLabelFlags adds the flags that say who is legitimate to a command
// that counts it.
func addLabelFlags(fs *pflag.FlagSet, o *traceOptions) {
	o.labels = &labelOptions{}
	fs.StringVar(&o.labels.Legit, "legit", "", "the legitimate requests: a condition on their fields, such as 'status<400 and not user_agent~bot' (alone: the others are abusive)")
	fs.StringVar(&o.labels.Abusive, "abusive", "", "the abusive requests: a condition such as 'ip in file:blocklist.txt' or 'user_agent~(?i)scraper' (alone: the others are legitimate)")
	fs.StringVar(&o.labels.Column, "labels", "", "a field that says legit or abusive (anything else: unlabelled), instead of --legit and --abusive")
}

// labelled reports whether --legit, --abusive or --labels is given.
func (o *traceOptions) labelled() bool { return o.labels != nil && *o.labels != (labelOptions{}) }

// labeler returns the labeler of the flags; nil when none is given (or
// the command has none).
func (o *labelOptions) labeler() (*traces.Labeler, error) {
	if o == nil {
		return nil, nil
	}
	l, err := traces.NewLabeler(o.Legit, o.Abusive, o.Column, os.ReadFile)
	if err != nil {
		return nil, usageErrorf("%s", ErrorText(err))
	}
	return l, nil
}

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

// checkLabelPick refuses --pick constraints on the label columns when
// the requests are not labelled.
func checkLabelPick(cons sweep.Constraints, labelled bool) error {
	if labelled {
		return nil
	}
	for _, c := range cons {
		if strings.HasPrefix(c.Column, "legit_") || strings.HasPrefix(c.Column, "abusive_") {
			return usageErrorf("--pick %s needs the requests labelled: give --legit, --abusive or --labels", c.Text)
		}
	}
	return nil
}
