package plan

import (
	"bytes"
	"encoding/binary"
	"unicode/utf16"
)

// encoding is how a plan file's text is stored. Most are UTF-8; `gh …
// > file` in Windows PowerShell writes UTF-16 with a byte-order mark, and
// some editors put a mark before UTF-8. The parsers read UTF-8 without a
// mark; an export writes the file back as it was stored.
type encoding struct {
	name  string
	bom   []byte
	order byteOrder // nil for UTF-8
}

type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

var (
	utf8Plain = encoding{name: "UTF-8"}
	utf8BOM   = encoding{name: "UTF-8 with a byte-order mark", bom: []byte{0xEF, 0xBB, 0xBF}}
	utf16LE   = encoding{name: "UTF-16 little-endian", bom: []byte{0xFF, 0xFE}, order: binary.LittleEndian}
	utf16BE   = encoding{name: "UTF-16 big-endian", bom: []byte{0xFE, 0xFF}, order: binary.BigEndian}
)

// decode returns data as UTF-8 text without a byte-order mark, and how it
// was stored. UTF-16 is told by its mark, or without one by the zero
// bytes of ASCII text ("[\x00{\x00").
func decode(data []byte) ([]byte, encoding) {
	for _, e := range []encoding{utf8BOM, utf16LE, utf16BE} {
		if bytes.HasPrefix(data, e.bom) {
			return e.toUTF8(data[len(e.bom):]), e
		}
	}
	if len(data) >= 4 && len(data)%2 == 0 {
		switch {
		case data[0] != 0 && data[1] == 0 && data[2] != 0 && data[3] == 0:
			e := encoding{name: "UTF-16 little-endian without a byte-order mark", order: binary.LittleEndian}
			return e.toUTF8(data), e
		case data[0] == 0 && data[1] != 0 && data[2] == 0 && data[3] != 0:
			e := encoding{name: "UTF-16 big-endian without a byte-order mark", order: binary.BigEndian}
			return e.toUTF8(data), e
		}
	}
	return data, utf8Plain
}

func (e encoding) toUTF8(data []byte) []byte {
	if e.order == nil {
		return data
	}
	units := make([]uint16, len(data)/2)
	for i := range units {
		units[i] = e.order.Uint16(data[2*i:])
	}
	var b bytes.Buffer
	for _, r := range utf16.Decode(units) {
		b.WriteRune(r)
	}
	return b.Bytes()
}

// encode stores text (UTF-8) as e.
func (e encoding) encode(text []byte) []byte {
	out := append([]byte{}, e.bom...)
	if e.order == nil {
		return append(out, text...)
	}
	for _, u := range utf16.Encode([]rune(string(text))) {
		out = e.order.AppendUint16(out, u)
	}
	return out
}
