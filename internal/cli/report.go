package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/harness-agent/harness/internal/failure"
	"github.com/harness-agent/harness/internal/progress"
	"github.com/harness-agent/harness/internal/report"
	"github.com/harness-agent/harness/internal/safefile"
	"github.com/harness-agent/harness/internal/workers"
)

var reportVerb = &command{
	name:    "report",
	args:    "[--out FILE] | --serve [ADDR]",
	summary: "write one self-contained HTML page with the dependency graph, timeline, task table and headline numbers, or serve it live on loopback (read-only)",
	run:     runReport,
}

// reportFile is where `harness report` writes the page by default: a
// .harness-* name, so task commits and rollbacks leave it alone.
const reportFile = ".harness-report.html"

func runReport(e *Env, c *command, args []string) int {
	fs := e.flags(c)
	out := fs.String("out", "", "the file to write (default .harness-report.html in the state root; - for stdout)")
	serve := fs.Bool("serve", false, "serve the page on ADDR (default 127.0.0.1 and a free port) until interrupted")
	pos, err := e.parse(fs, args)
	if err != nil {
		return e.fail(err)
	}
	if len(pos) > 1 || len(pos) == 1 && !*serve {
		return e.fail(usageErr(c, "unexpected argument %q", pos[len(pos)-1]))
	}
	if *serve && *out != "" {
		return e.fail(usageErr(c, "--serve and --out do not go together"))
	}
	dir, err := e.viewRoot()
	if err != nil {
		return e.fail(err)
	}
	if *serve {
		addr := "127.0.0.1:0"
		if len(pos) == 1 {
			addr = pos[0]
		}
		return e.serveReport(dir, addr)
	}
	page, err := e.renderReport(dir, report.Options{})
	if err != nil {
		return e.fail(err)
	}
	if *out == "-" {
		e.Stdout.Write(page)
		return ExitOK
	}
	path := *out
	if path == "" {
		path = filepath.Join(dir, reportFile)
	} else if !filepath.IsAbs(path) {
		path = filepath.Join(e.Cwd, path)
	}
	if err := os.WriteFile(path, page, 0o644); err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot write the report: %v", err))
	}
	fmt.Fprintln(e.Stdout, "report written to "+path)
	if *out == "" {
		// The default name starts with a dot, which `ls` and file
		// browsers hide: the path above is the one to open.
		fmt.Fprintln(e.Stdout, "open it in a browser (the name starts with a dot, so `ls` and file browsers hide it)")
	}
	return ExitOK
}

// renderReport reads the state and streams the progress log into the page.
func (e *Env) renderReport(dir string, o report.Options) ([]byte, error) {
	s, err := e.load(dir)
	if err != nil {
		return nil, err
	}
	tl := &report.Timeline{}
	if f, err := safefile.Open(progress.Path(dir)); err == nil {
		tl, err = report.ReadLog(f)
		f.Close()
		if err != nil {
			return nil, failure.Wrap(failure.EnvSetup, err, "cannot read %s: %v", progress.FileName, err)
		}
	}
	var b bytes.Buffer
	data := report.Build(s, tl, e.Now())
	data.Headline.Budget = budgetUse(dir, s)
	if s.Concurrent() {
		tail, _ := progress.Tail(dir, 400)
		if board := workers.View(dir, s, tail); board != nil {
			data.Workers = board.Lines()
		}
	}
	err = report.Write(&b, data, o)
	return b.Bytes(), err
}

// serveReport answers every GET on a loopback address with the page freshly
// built from the files, which reloads itself every few seconds: the view
// follows the job live. A tiny HTTP/1.0 responder keeps net/http (and its
// start-up cost) out of the harness binary every hook verb runs.
func (e *Env) serveReport(dir, addr string) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host, addr = addr, net.JoinHostPort(addr, "0")
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return e.fail(failure.New(failure.Usage, "report --serve listens on loopback only, not %q", host).WithHint("use 127.0.0.1:PORT or [::1]:PORT"))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return e.fail(failure.Wrap(failure.EnvSetup, err, "cannot listen on %s: %v", addr, err))
	}
	defer ln.Close()
	fmt.Fprintf(e.Stdout, "serving the report on http://%s/ (Ctrl-C to stop)\n", ln.Addr())
	if f, ok := e.Stdout.(*os.File); ok {
		f.Sync()
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	defer signal.Stop(stop)
	go func() { <-stop; ln.Close() }()
	for {
		conn, err := ln.Accept()
		if err != nil {
			return ExitOK
		}
		go e.answer(conn, dir)
	}
}

func (e *Env) answer(conn net.Conn, dir string) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	for { // drain the headers
		h, err := r.ReadString('\n')
		if err != nil || strings.TrimSpace(h) == "" {
			break
		}
	}
	status, ctype := "200 OK", "text/html; charset=utf-8"
	var body []byte
	if f := strings.Fields(line); len(f) < 2 || f[0] != "GET" {
		status, ctype, body = "405 Method Not Allowed", "text/plain", []byte("GET only\n")
	} else if page, err := e.renderReport(dir, report.Options{RefreshSeconds: 3}); err != nil {
		status, ctype, body = "500 Internal Server Error", "text/plain", []byte(err.Error()+"\n")
	} else {
		body = page
	}
	fmt.Fprintf(conn, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n", status, ctype, len(body))
	conn.Write(body)
}
