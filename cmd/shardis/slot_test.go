package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// runCLI runs the CLI in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}
	code = run(context.Background(), env, args)
	return code, out.String(), errOut.String()
}

// keyslotRows reads the slots a real Redis server returned: key_hex and slot.
func keyslotRows(t *testing.T) (hexKeys, slots []string) {
	t.Helper()
	f, err := os.Open("../../cluster/testdata/keyslot.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 3 {
			t.Fatalf("keyslot.tsv: bad row %q", sc.Text())
		}
		hexKeys = append(hexKeys, fields[0])
		slots = append(slots, fields[2])
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(hexKeys) < 300 {
		t.Fatalf("read %d rows from keyslot.tsv, want at least 300", len(hexKeys))
	}
	return hexKeys, slots
}

func TestSlotHexVectors(t *testing.T) {
	hexKeys, slots := keyslotRows(t)
	var want strings.Builder
	for i := range hexKeys {
		want.WriteString(hexKeys[i] + "\t" + slots[i] + "\n")
	}

	code, out, errOut := runCLI(t, "", append([]string{"slot", "--hex", "--"}, hexKeys...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("slot --hex KEY...: exit %d, stderr %q", code, errOut)
	}
	if out != want.String() {
		t.Errorf("slot --hex KEY...: output differs from keyslot.tsv\n%s", firstDiff(out, want.String()))
	}

	// The same keys on standard input, with a CRLF line and no final newline.
	in := strings.Join(hexKeys, "\n")
	in = strings.Replace(in, "\n", "\r\n", 1)
	code, out, errOut = runCLI(t, in, "slot", "-hex")
	if code != 0 || errOut != "" {
		t.Fatalf("slot --hex < keys: exit %d, stderr %q", code, errOut)
	}
	if out != want.String() {
		t.Errorf("slot --hex < keys: output differs from keyslot.tsv\n%s", firstDiff(out, want.String()))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %q, want %q", i+1, g[i], w[i])
		}
	}
	return "different number of lines"
}

func TestSlot(t *testing.T) {
	for _, tt := range []struct {
		name       string
		stdin      string
		args       []string
		want       string
		wantStderr string
	}{
		{
			name: "arguments",
			args: []string{"foo", "{user1000}.following", "foo{}{bar}", "123456789"},
			want: "foo\t12182\n{user1000}.following\t3443\nfoo{}{bar}\t8363\n123456789\t12739\n",
		},
		{
			name: "arguments after --",
			args: []string{"--", "-x", ""},
			want: "-x\t3877\n\t0\n",
		},
		{
			name: "hex arguments printed as given",
			args: []string{"--hex", "666F6F", "7b7d", ""},
			want: "666F6F\t12182\n7b7d\t15257\n\t0\n",
		},
		{
			name:  "standard input",
			stdin: "foo\n\nbar\n{user1000}.followers",
			want:  "foo\t12182\n\t0\nbar\t5061\n{user1000}.followers\t3443\n",
		},
		{
			name:  "standard input with a final newline",
			stdin: "foo\nbar\n",
			want:  "foo\t12182\nbar\t5061\n",
		},
		{
			name:  "empty standard input",
			stdin: "",
			want:  "",
		},
		{
			name:       "a carriage return belongs to the key",
			stdin:      "foo\r\nfoo\r\n",
			want:       "foo\r\t936\nfoo\r\t936\n",
			wantStderr: "shardis slot: warning: line 1 ends with \"\\r\", kept as part of the key",
		},
		{
			name:  "binary bytes on standard input",
			stdin: "a\tb\x00\xff\n",
			want:  "a\tb\x00\xff\t11009\n",
		},
		{
			name:  "hex on standard input",
			stdin: "666f6f\r\n7b7d\n\n",
			args:  []string{"--hex"},
			want:  "666f6f\t12182\n7b7d\t15257\n\t0\n",
		},
		{
			name:  "long line",
			stdin: strings.Repeat("k", 100000) + "{tag}\n",
			want:  strings.Repeat("k", 100000) + "{tag}\t8338\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, append([]string{"slot"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			if out != tt.want {
				t.Errorf("stdout = %.200q, want %.200q", out, tt.want)
			}
			if tt.wantStderr == "" && errOut != "" || !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr = %q, want %q", errOut, tt.wantStderr)
			}
		})
	}
}

func TestSlotErrors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		stdin    string
		args     []string
		wantOut  string
		wantCode int
		wantErr  []string
	}{
		{
			name:     "bad hex argument",
			args:     []string{"--hex", "666f6f", "zz"},
			wantCode: 2,
			wantErr:  []string{"shardis slot: usage: bad hex key \"zz\"", "invalid byte"},
		},
		{
			name:     "odd hex argument",
			args:     []string{"--hex", "666"},
			wantCode: 2,
			wantErr:  []string{"bad hex key \"666\"", "odd length"},
		},
		{
			name:     "bad hex line",
			stdin:    "666f6f\n 666f6f\n626172\n",
			args:     []string{"--hex"},
			wantOut:  "666f6f\t12182\n",
			wantCode: 2,
			wantErr:  []string{"usage: line 2: bad hex key \" 666f6f\""},
		},
		{
			name:     "unknown flag",
			args:     []string{"--bogus"},
			wantCode: 2,
			wantErr:  []string{"flag provided but not defined: --bogus", "see 'shardis slot -h'"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.stdin, append([]string{"slot"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, errOut)
			}
			if out != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out, tt.wantOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr = %q, want it to contain %q", errOut, w)
				}
			}
		})
	}
	// -h: the usage asked for is the output.
	code, out, errOut := runCLI(t, "", "slot", "-h")
	if code != 0 || errOut != "" || !strings.Contains(out, "Usage: shardis slot [--hex] [KEY ...]") || !strings.Contains(out, "-hex") {
		t.Errorf("-h: exit %d\nstdout: %q\nstderr: %q", code, out, errOut)
	}
}

func TestSlotCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	env := &cliEnv{stdin: strings.NewReader("foo\n"), stdout: &out, stderr: &errOut}
	if code := run(ctx, env, []string{"slot"}); code != 1 || out.Len() != 0 {
		t.Fatalf("canceled run: exit %d, stdout %q, stderr %q; want exit 1 and no output", code, out.String(), errOut.String())
	}
}
