package state

import (
	"bytes"
	"encoding/json"
)

// orderedMap is a JSON object that keeps its keys in insertion order, so a new
// task is written in the same field order as the protocol's schema.
type orderedMap struct {
	keys []string
	vals map[string]any
}

func newOrderedMap() *orderedMap { return &orderedMap{vals: map[string]any{}} }

func (m *orderedMap) set(k string, v any) *orderedMap {
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
	return m
}

// MarshalJSON writes the keys in order; the encoder indents the result.
func (m *orderedMap) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		var vb bytes.Buffer
		enc := json.NewEncoder(&vb)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m.vals[k]); err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
