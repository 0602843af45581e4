package mcp

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"
)

// The reflection mirror: what a structured answer looks like once encoded
// and decoded as JSON, built without the round trip, for the output-schema
// validator (see toResult).

// jsonView is jsonValue without reflection for the types answers are
// made of.
func jsonView(v any) (any, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return v, utf8.ValidString(v)
	case int:
		return float64(v), true
	case bool:
		return v, true
	case map[string]any:
		if v == nil {
			return nil, true
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			j, ok := jsonView(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = j
		}
		return out, true
	case []any:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			j, ok := jsonView(e)
			if !ok {
				return nil, false
			}
			out[i] = j
		}
		return out, true
	case []string:
		if v == nil {
			return nil, true
		}
		out := make([]any, len(v))
		for i, e := range v {
			if !utf8.ValidString(e) {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	}
	return jsonValue(reflect.ValueOf(v))
}

// jsonValue returns what json.Unmarshal into an any would make of
// json.Marshal(v) (maps as map[string]any, lists as []any, numbers as
// float64), sharing v's strings instead of copying them. It reports false
// when v holds something whose encoding it does not mirror exactly (a
// struct, a json.Marshaler, []byte, float32, a string that is not valid
// UTF-8, ...); the caller then does the round trip.
func jsonValue(v reflect.Value) (any, bool) {
	if !v.IsValid() {
		return nil, true
	}
	t := v.Type()
	if t.Kind() != reflect.Interface && t.Kind() != reflect.Pointer &&
		(t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
			reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return nil, true
		}
		return jsonValue(v.Elem())
	case reflect.String:
		s := v.String()
		return s, utf8.ValidString(s)
	case reflect.Bool:
		return v.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float64:
		return v.Float(), true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil, false // base64 on the wire
		}
		if v.IsNil() {
			return nil, true
		}
		out := make([]any, v.Len())
		for i := range out {
			e, ok := jsonValue(v.Index(i))
			if !ok {
				return nil, false
			}
			out[i] = e
		}
		return out, true
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key() != reflect.TypeFor[string]() {
			return nil, false
		}
		if v.IsNil() {
			return nil, true
		}
		out := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, false
			}
			e, ok := jsonValue(it.Value())
			if !ok {
				return nil, false
			}
			out[k] = e
		}
		return out, true
	}
	return nil, false
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()
)
