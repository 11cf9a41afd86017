package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLogWriterRecordsStreamsAndReaderHonoursOptions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	lw, stdout, stderr, err := newLogWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(stdout, "one")
	// The streams are read concurrently; a pause keeps their order.
	time.Sleep(20 * time.Millisecond)
	fmt.Fprintln(stderr, "two")
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	fmt.Fprintln(stdout, "three")
	fmt.Fprint(stdout, "four without newline")
	stdout.Close()
	stderr.Close()
	<-lw.done

	read := func(o logOptions) string {
		var b strings.Builder
		if err := readLog(path, o, lw.done, &b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	if got := read(logOptions{}); got != "one\ntwo\nthree\nfour without newline\n" {
		t.Errorf("all: %q", got)
	}
	if got := read(logOptions{since: mid}); got != "three\nfour without newline\n" {
		t.Errorf("sinceTime: %q", got)
	}
	if got := read(logOptions{tailLines: 2}); got != "three\nfour without newline\n" {
		t.Errorf("tailLines: %q", got)
	}
	if got := read(logOptions{limitBytes: 6}); got != "one\ntw" {
		t.Errorf("limitBytes: %q", got)
	}
	got := read(logOptions{timestamps: true, tailLines: 1})
	ts, msg, _ := strings.Cut(got, " ")
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || msg != "four without newline\n" {
		t.Errorf("timestamps: %q", got)
	}
	if got := lw.lastLines(1); got != "four without newline\n" {
		t.Errorf("lastLines: %q", got)
	}
}

func TestReadLogFollowStreamsUntilTheWriterEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	lw, stdout, stderr, err := newLogWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	stderr.Close()
	fmt.Fprintln(stdout, "before")
	result := make(chan string)
	go func() {
		var b strings.Builder
		_ = readLog(path, logOptions{follow: context.Background()}, lw.done, &b)
		result <- b.String()
	}()
	time.Sleep(250 * time.Millisecond)
	fmt.Fprintln(stdout, "after")
	stdout.Close()
	select {
	case got := <-result:
		if got != "before\nafter\n" {
			t.Errorf("follow: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("follow did not end when the writer ended")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
