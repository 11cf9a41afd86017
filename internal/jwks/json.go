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
// an infinity or zero, not an error), a repeated member's last value.
func decodeJSON(data []byte) (any, bool) {
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
