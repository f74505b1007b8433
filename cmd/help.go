package cmd

import (
	"embed"
	"strings"
)

// helpFiles hold the long help texts of the commands and of the topics
// their help ends with, a file each: help/NAME.txt.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpText is the text of help/NAME.txt, without the file's last
// newline, with each {{KEY}} replaced by the value after it in vars
// (pairs of a key and its value). A file missing is a bug of the build,
// which every test of help finds.
func helpText(name string, vars ...string) string {
	b, err := helpFiles.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("cmd: no help text " + name)
	}
	s := strings.TrimSuffix(string(b), "\n")
	for i := 0; i+1 < len(vars); i += 2 {
		s = strings.ReplaceAll(s, "{{"+vars[i]+"}}", vars[i+1])
	}
	return s
}
