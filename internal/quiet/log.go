package quiet

import (
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

// Entry is one line of the hooks' debug log ($HARNESS_HOOK_LOG): a hook's
// call and what it decided.
type Entry struct {
	Event, SessionID, Tool   string
	Malformed                bool
	Decision                 string // silent, allow, deny, block or refuse
	Reason, Context, Warning string
	Exit                     int
	Took                     time.Duration
	Quiet                    bool // ended before its packages were initialised (Off)
}

// Log appends e as one JSON line to $HARNESS_HOOK_LOG, when it is set.
// The line is written here, by hand, for Off to write one before anything
// else is initialised; the hooks write theirs through it too.
func Log(e Entry) {
	path, _ := syscall.Getenv("HARNESS_HOOK_LOG")
	if path == "" {
		return
	}
	b := []byte(`{"context":`)
	b = quote(b, e.Context)
	b = append(b, `,"decision":`...)
	b = quote(b, e.Decision)
	b = append(b, `,"event":`...)
	b = quote(b, e.Event)
	b = append(b, `,"exit":`...)
	b = strconv.AppendInt(b, int64(e.Exit), 10)
	b = append(b, `,"malformed":`...)
	b = strconv.AppendBool(b, e.Malformed)
	b = append(b, `,"micros":`...)
	b = strconv.AppendInt(b, e.Took.Microseconds(), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(syscall.Getpid()), 10)
	if e.Quiet {
		b = append(b, `,"quiet":true`...)
	}
	b = append(b, `,"reason":`...)
	b = quote(b, e.Reason)
	b = append(b, `,"session_id":`...)
	b = quote(b, e.SessionID)
	b = append(b, `,"time":`...)
	b = quote(b, time.Now().UTC().Format(time.RFC3339Nano))
	b = append(b, `,"tool":`...)
	b = quote(b, e.Tool)
	b = append(b, `,"warning":`...)
	b = quote(b, e.Warning)
	b = append(b, "}\n"...)
	fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_APPEND|syscall.O_CREAT|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		return
	}
	syscall.Write(fd, b)
	syscall.Close(fd)
}

// quote appends s to b as a JSON string: quotes, backslashes and control
// characters escaped, bytes that are not UTF-8 as U+FFFD.
func quote(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}
