package redisstore

import "strings"

// Keys. A key's state under a limiter lives at PREFIX{TAG}:LIMITER:ALGO,
// where TAG is the key escaped: "%" as "%25", "{" as "%7B" and "}" as
// "%7D", and the empty key as "%". Redis Cluster hashes the text between
// a name's first "{" and the first "}" after it: the prefix holds no
// brace, so that text is always TAG, never empty, and no text in a key
// can move one of its names to another slot or make two keys' names
// meet. Every limiter of a key shares its slot, and the algorithm in the
// name keeps limiters of one name but different algorithms (in stores of
// different processes) from reading each other's state.

// keyEscapes are the bytes a tag escapes.
const keyEscapes = "%{}"

// appendTag appends key's tag to dst.
func appendTag(dst []byte, key string) []byte {
	if key == "" {
		return append(dst, '%')
	}
	if !strings.ContainsAny(key, keyEscapes) {
		return append(dst, key...)
	}
	for i := 0; i < len(key); i++ {
		switch c := key[i]; c {
		case '%':
			dst = append(dst, "%25"...)
		case '{':
			dst = append(dst, "%7B"...)
		case '}':
			dst = append(dst, "%7D"...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// keyName returns the Redis name of key's state under the suffix
// (":LIMITER:ALGO").
func keyName(prefix, key, suffix string) string {
	b := make([]byte, 0, len(prefix)+len(key)+len(suffix)+2)
	b = append(b, prefix...)
	b = append(b, '{')
	b = appendTag(b, key)
	b = append(b, '}')
	b = append(b, suffix...)
	return string(b)
}

// checkPrefix refuses a prefix with a brace, which would make the names'
// hash tag its own.
func checkPrefix(prefix string) error {
	if strings.ContainsAny(prefix, "{}") {
		return &PrefixError{Prefix: prefix}
	}
	return nil
}

// A PrefixError is a key prefix the store cannot use: it holds a brace,
// and Redis Cluster would read the text after it as the keys' hash tag.
type PrefixError struct{ Prefix string }

func (e *PrefixError) Error() string {
	return "redisstore: prefix " + quote(e.Prefix) + " holds a brace, which Redis Cluster reads as the start of a key's hash tag"
}

func quote(s string) string { return strings.ReplaceAll(`"`+s+`"`, "\n", `\n`) }
