package report

import (
	"bytes"
	"html/template"
	"io"
	"regexp"
	"sync"
)

// A Document is the HTML report: a heading, lines that state the trace
// and the policy, and sections of tables and figures.
type Document struct {
	Title    string
	Lines    []string
	Sections []Section
}

// A Section is one part of a Document.
type Section struct {
	Heading string
	Text    []string
	Tables  []Table
	Figures []*Figure
}

// A Table is a table of texts; Right marks the columns of numbers.
type Table struct {
	Caption string
	Header  []string
	Right   []bool
	Rows    [][]string
	// Class is the table's CSS class, which tests and scripts find it by
	// ("summary", "agreement", ...).
	Class string
}

// htmlColumns is how many columns the report's figures are downsampled
// to: enough for a screen or a page, and it bounds the report's size
// whatever the trace's length.
const htmlColumns = 500

// WriteHTML writes d as one self-contained HTML file: its style and its
// script inline, its figures inline SVG, and no reference to anything
// outside it (no URL, font, script or stylesheet), so it works offline
// and from file://. The same document gives the same bytes.
func WriteHTML(w io.Writer, d *Document) error {
	type figure struct {
		SVG   template.HTML
		Title string
	}
	type section struct {
		Section
		SVGs   []figure
		Tables []table
	}
	var data struct {
		Title    string
		Lines    []string
		Sections []section
		Script   template.JS
		Style    template.CSS
	}
	data.Title, data.Lines = d.Title, d.Lines
	data.Script, data.Style = template.JS(sortScript), template.CSS(style)
	// The figures are drawn side by side, each into its own buffer.
	var figures []*Figure
	for _, s := range d.Sections {
		figures = append(figures, s.Figures...)
	}
	svgs := make([]bytes.Buffer, len(figures))
	errs := make([]error, len(figures))
	var wg sync.WaitGroup
	for i, f := range figures {
		wg.Go(func() {
			g := *f
			if g.Columns == 0 {
				g.Columns = htmlColumns
			}
			errs[i] = Write(&svgs[i], &g, "svg")
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	i := 0
	for _, s := range d.Sections {
		sec := section{Section: s}
		for _, t := range s.Tables {
			sec.Tables = append(sec.Tables, tableOf(t))
		}
		for _, f := range s.Figures {
			title := ""
			if len(f.Title) > 0 {
				title = f.Title[0]
			}
			sec.SVGs = append(sec.SVGs, figure{SVG: template.HTML(inlineSVG(svgs[i].Bytes())), Title: title})
			i++
		}
		data.Sections = append(data.Sections, sec)
	}
	return page.Execute(w, data)
}

// table is a Table as the page writes it: each cell with its sort key.
type table struct {
	Caption, Class string
	Header         []string
	Rows           [][]tableCell
}

// tableCell is one cell of a table: its text, whether it is a number
// (right-aligned), and the key the page sorts it by, "" for text (which
// the page sorts by the text itself).
type tableCell struct {
	Text string
	Num  bool
	Key  string
}

// tableOf gives every cell of t its sort key (SortKey).
func tableOf(t Table) table {
	out := table{Caption: t.Caption, Class: t.Class, Header: t.Header}
	for _, row := range t.Rows {
		cells := make([]tableCell, len(row))
		for i, text := range row {
			cells[i] = tableCell{Text: text, Num: i < len(t.Right) && t.Right[i]}
			if k := SortKey(text); k[0] != classText {
				cells[i].Key = k
			}
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

var (
	svgPrelude = regexp.MustCompile(`(?s)^.*?<svg`)
	svgXMLNS   = regexp.MustCompile(`\s+xmlns(:xlink)?="[^"]*"`)
)

// inlineSVG makes an SVG document fit inside HTML: without its XML
// prelude and comment, and without the namespace attributes HTML does
// not need (which are URLs, though never fetched).
func inlineSVG(svg []byte) []byte {
	svg = svgPrelude.ReplaceAll(svg, []byte("<svg"))
	svg = svgXMLNS.ReplaceAll(svg, nil)
	return bytes.Replace(svg, []byte("<svg"), []byte(`<svg role="img"`), 1)
}

// sortScript sorts a table by the column whose header is clicked, a
// click again the other way: by each cell's data-sort key (SortKey) when
// it has one, which orders numbers, times and addresses, and as text in
// the reader's language otherwise. Without JavaScript the tables read as
// they are.
const sortScript = `document.querySelectorAll("table.sortable th").forEach(function (th) {
  th.tabIndex = 0;
  var key = function (cell) { var k = cell.getAttribute("data-sort"); return k === null ? "` + string(classText) + `" + cell.textContent : k; };
  var compare = function (a, b) {
    if (a.charAt(0) === "` + string(classText) + `" && b.charAt(0) === "` + string(classText) + `") { return a.slice(1).localeCompare(b.slice(1)); }
    return a < b ? -1 : a > b ? 1 : 0;
  };
  var sort = function () {
    var body = th.closest("table").tBodies[0], rows = Array.from(body.rows);
    var dir = th.dataset.dir === "asc" ? -1 : 1;
    th.closest("tr").querySelectorAll("th").forEach(function (h) { delete h.dataset.dir; h.removeAttribute("aria-sort"); });
    th.dataset.dir = dir > 0 ? "asc" : "desc";
    th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
    rows.sort(function (a, b) { return dir * compare(key(a.cells[th.cellIndex]), key(b.cells[th.cellIndex])); });
    rows.forEach(function (r) { body.appendChild(r); });
  };
  th.addEventListener("click", sort);
  th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
});`

const style = `:root { color-scheme: light dark; --fg: #1a1a1a; --bg: #ffffff; --muted: #555; --line: #ccc; --head: #f2f2f2; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e8; --bg: #161616; --muted: #aaa; --line: #444; --head: #262626; } }
body { font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); margin: 0 auto; padding: 1em; max-width: 72em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid var(--line); }
p.meta { color: var(--muted); margin: 0.2em 0; font-family: ui-monospace, monospace; font-size: 0.9em; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
caption { text-align: left; color: var(--muted); padding: 0.3em 0; }
th, td { border: 1px solid var(--line); padding: 0.25em 0.6em; white-space: nowrap; }
th { background: var(--head); text-align: left; cursor: pointer; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1em 0; background: #fff; border: 1px solid var(--line); padding: 0.3em; }
figure svg { display: block; width: 100%; height: auto; }
@media print { body { max-width: none; font-size: 11px; } figure, table { break-inside: avoid; } th { cursor: auto; } }`

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
{{.Style}}
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Lines}}<p class="meta">{{.}}</p>
{{end}}{{range .Sections}}<section>
<h2>{{.Heading}}</h2>
{{range .Text}}<p>{{.}}</p>
{{end}}{{range .Tables}}<div class="scroll"><table class="sortable {{.Class}}">
{{with .Caption}}<caption>{{.}}</caption>
{{end}}<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Num}} class="num"{{end}}{{with .Key}} data-sort="{{.}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}{{range .SVGs}}<figure class="chart" aria-label="{{.Title}}">
{{.SVG}}
</figure>
{{end}}</section>
{{end}}<script>
{{.Script}}
</script>
</body>
</html>
`))
