// Package tables builds the tables of ratesim's reports, their columns
// and rows of cells, and the lines that introduce them, from the engine's
// results and the resolved policy: the summary, the worst bursts, the
// keys rejected most, the sweep's candidates, the per-request rows. The
// renderer (internal/render) writes them in every output format; the
// command line only chooses which to write.
package tables
