package report

import "bytes"

// JSON scanning helpers for parseRecord: each takes the line and an index
// and returns the index after what it read. Running out of input is
// errTruncated; anything else unexpected is errNotJSON.

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// scanString reads the string starting at the quote b[i] and returns its
// raw content, whether it has escapes, and the index after the closing
// quote. Control characters are not rejected (a lenient reading: no valid
// line has them). The closing quote is found with bytes.IndexByte, which
// is vectorised; escapes take the slow path.
func scanString(b []byte, i int) (raw []byte, esc bool, j int, err error) {
	if i >= len(b) {
		return nil, false, 0, errTruncated
	}
	if b[i] != '"' {
		return nil, false, 0, errNotJSON
	}
	q := bytes.IndexByte(b[i+1:], '"')
	if q < 0 {
		return nil, false, 0, errTruncated
	}
	if bytes.IndexByte(b[i+1:i+1+q], '\\') < 0 {
		return b[i+1 : i+1+q], false, i + q + 2, nil
	}
	for j = i + 1; j < len(b); j++ {
		switch b[j] {
		case '"':
			return b[i+1 : j], true, j + 1, nil
		case '\\':
			j++
		}
	}
	return nil, false, 0, errTruncated
}

// skipValue steps over one value of any type. Arrays and objects are
// followed by depth alone (no recursion, so nesting depth costs nothing).
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for {
		if i >= len(b) {
			return 0, errTruncated
		}
		switch c := b[i]; {
		case c == '"':
			_, _, j, err := scanString(b, i)
			if err != nil {
				return 0, err
			}
			i = j
		case c == '{' || c == '[':
			depth++
			i++
		case c == '}' || c == ']':
			if depth == 0 {
				return 0, errNotJSON
			}
			depth--
			i++
		case depth > 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n'):
			i++
		case c == '-' || (c >= '0' && c <= '9'):
			i = skipNumber(b, i)
		case c == 't' || c == 'f' || c == 'n':
			j, err := skipLiteral(b, i)
			if err != nil {
				return 0, err
			}
			i = j
		default:
			return 0, errNotJSON
		}
		if depth == 0 {
			return i, nil
		}
	}
}

func skipNumber(b []byte, i int) int {
	for i < len(b) {
		switch c := b[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}

func skipLiteral(b []byte, i int) (int, error) {
	for _, lit := range [...]string{"true", "false", "null"} {
		if lit[0] != b[i] {
			continue
		}
		for k := 0; k < len(lit); k++ {
			if i+k >= len(b) {
				return 0, errTruncated
			}
			if b[i+k] != lit[k] {
				return 0, errNotJSON
			}
		}
		return i + len(lit), nil
	}
	return 0, errNotJSON
}
