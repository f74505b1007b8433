package sim

// The front of every replay, shared by Run, RunStack and RunClients: one
// goroutine reads the trace into batches (events parsed, keys built, the
// attributes to show copied), hands each batch to the workers, if the
// replay has any, and passes the batches on in trace order to the one
// goroutine that decides or emits their requests. Whatever a request
// carries (its line, key, time as written, attributes) is read here once,
// the same way for every replay.

// keySet is one way of keying a request: the attributes whose values make
// the key (see appendKeyOf), and the name of the limiter keyed so, for
// errors.
type keySet struct {
	name   string
	fields []string
}

// newEngine returns an engine for a replay of src under cfg, which the
// caller has checked.
func newEngine(src Source, cfg Config) *engine {
	e := &engine{cfg: cfg, nalg: len(cfg.Lanes), name: "trace"}
	if n, ok := src.(interface{ Name() string }); ok {
		e.name = n.Name()
	}
	return e
}

// pipeline is a replay's reading in progress.
type pipeline struct {
	e       *engine
	free    chan *batch
	ordered chan *batch
	workers bool
	err     error // the reader's, once ordered is closed
	n       int64 // requests read, once ordered is closed
}

// start reads src in a goroutine of its own, filling batches and sending
// each to every channel of work and then, in trace order, to the
// pipeline's consumer: see each.
func (e *engine) start(src Source, work []chan *batch) *pipeline {
	p := &pipeline{e: e, free: make(chan *batch, inflight), ordered: make(chan *batch, inflight), workers: len(work) > 0}
	for range inflight {
		p.free <- e.newBatch()
	}
	go func() {
		defer close(p.ordered)
		defer func() {
			for _, ch := range work {
				close(ch)
			}
		}()
		defer func() {
			if r := recover(); r != nil {
				p.err = internalError(r)
			}
		}()
		p.n, p.err = e.read(src, p.free, work, p.ordered)
	}()
	return p
}

// each calls f on every batch in trace order, once the workers are done
// with it, until f fails; the reading then stops. It returns the number
// of requests read and the first error of f or of the reading.
func (p *pipeline) each(f func(b *batch) error) (int64, error) {
	var err error
	for b := range p.ordered {
		if p.workers {
			<-b.done
		}
		if err == nil {
			if err = f(b); err != nil {
				p.e.stop.Store(true)
			}
		}
		p.free <- b
	}
	if err != nil {
		return 0, err
	}
	if p.err != nil && p.err != errStopped {
		return 0, p.err
	}
	return p.n, nil
}

// expose fills b's Requests, with their attributes, for its consumer.
func (b *batch) expose() {
	b.withVals = b.withVals[:0]
	for _, w := range b.withs {
		b.withVals = append(b.withVals, b.slice(w))
	}
	b.Requests = b.Requests[:0]
	for i := range b.rows {
		r := b.request(i)
		if b.nwith > 0 {
			r.with = b.withVals[i*b.nwith : (i+1)*b.nwith : (i+1)*b.nwith]
		}
		b.Requests = append(b.Requests, r)
	}
}

// key returns request i's key under Config.keySets[k].
func (b *batch) key(i, k, sets int) []byte {
	return b.slice(b.keys[i*sets+k])
}
