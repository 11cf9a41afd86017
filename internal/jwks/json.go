package jwks

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
)

// decodeJSON decodes JSON as lua-cjson does with the options jwt.lua sets:
// standard JSON only (no NaN, Infinity or hexadecimal numbers), nested at
// most MaxJSONDepth deep, numbers as doubles (strtod: one out of range is
// an infinity or zero, not an error), a repeated member's last value, a
// \u escape of half a surrogate pair refused. lua-cjson is more lenient
// in two ways this is not (it reads "1." as a number, and a raw control
// character inside a string): only a key's holder can sign such a token,
// so they never decide whether an unsigned token passes.
func decodeJSON(data []byte) (any, bool) {
	if loneSurrogate(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false // data after the value
	}
	return v, true
}

var errDepth = errors.New("nested too deep")

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := t.(type) {
	case json.Delim:
		if depth+1 > MaxJSONDepth {
			return nil, errDepth
		}
		if t == '{' {
			m := map[string]any{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[k.(string)] = v
			}
			_, err := dec.Token()
			return m, err
		}
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token()
		return a, err
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	}
	return t, nil
}

// scalar is a claim value as text, as jwt.lua writes it; false for
// objects, arrays and null.
func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "inf", true
		case math.IsInf(v, -1):
			return "-inf", true
		}
		return strconv.FormatFloat(v, 'g', 14, 64), true
	}
	return "", false
}

// loneSurrogate says whether a JSON text escapes half a surrogate pair
// (\ud800 without its low half, or a low half alone), which lua-cjson
// refuses and Go's decoder would replace.
func loneSurrogate(data []byte) bool {
	inString := false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(data):
			if data[i+1] != 'u' {
				i++
				continue
			}
			u, ok := hex4(data, i+2)
			if !ok {
				return false // invalid JSON: the decoder refuses it
			}
			switch {
			case u >= 0xdc00 && u <= 0xdfff:
				return true
			case u >= 0xd800 && u <= 0xdbff:
				low, ok := hex4(data, i+8)
				if i+7 >= len(data) || data[i+6] != '\\' || data[i+7] != 'u' || !ok || low < 0xdc00 || low > 0xdfff {
					return true
				}
				i += 11
			default:
				i += 5
			}
		}
	}
	return false
}

// hex4 reads four hex digits at data[i:].
func hex4(data []byte, i int) (uint64, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	u, err := strconv.ParseUint(string(data[i:i+4]), 16, 32)
	return u, err == nil
}
