package spec

import (
	"io"
	"os"
)

// ReadFileData reads the policy file at path, as ReadFile does, and
// returns its bytes beside it: a replay split into shards carries them,
// so that its merge resolves the same policy wherever it runs.
func ReadFileData(path string) (*File, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, nil, errorf("%s: policy file larger than %d bytes", path, MaxFileBytes)
	}
	pf, err := parseFile(path, data)
	return pf, data, err
}

// ParseFile parses data as the policy file at path, as ReadFile would
// had it read data there.
func ParseFile(path string, data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, errorf("%s: policy file larger than %d bytes", path, MaxFileBytes)
	}
	return parseFile(path, data)
}
