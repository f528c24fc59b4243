package localenv

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Secret is a credential the e2e suite knows, to be looked for in what the
// management cluster logs and records.
type Secret struct {
	Name, Value string
}

// RegistrySecrets are the forms of a registry's basic-auth credentials that
// the scanner is given: the password; "user:password", whose base64 is a
// docker config's auth field; and that auth field itself, whose base64 is
// what a dumped pull or push Secret (data is base64 of the docker config)
// holds, encoded twice.
func RegistrySecrets(name, user, password string) []Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	return []Secret{
		{Name: name + " password", Value: password},
		{Name: name + " user:password", Value: user + ":" + password},
		{Name: name + " auth field", Value: auth},
	}
}

// MinSecretLength is the shortest value the scanner looks for: a shorter one
// (the local OpenStack's "demo" password) also occurs as an ordinary word, so
// a hit would say nothing.
const MinSecretLength = 12

// Finding is one occurrence of a secret. It names the secret and never
// carries its value.
type Finding struct {
	Secret, Form, Where string
	Line                int
}

func (f Finding) String() string {
	return fmt.Sprintf("%s line %d: %s (%s)", f.Where, f.Line, f.Secret, f.Form)
}

// Scanner looks for secrets in text, as written and base64-encoded.
type Scanner struct {
	needles []needle
	skipped []string
}

type needle struct {
	secret, form, text string
}

// NewScanner looks for each secret of at least MinSecretLength bytes in
// these forms: as written; base64 (standard and URL alphabets); and the part
// of its encoding that is the same wherever the value sits inside a longer
// encoded text (a clouds.yaml or a docker config encoded whole), for each of
// the three alignments. Shorter secrets are reported by Skipped.
func NewScanner(secrets []Secret) *Scanner {
	s := &Scanner{}
	seen := map[string]bool{}
	add := func(secret, form, text string) {
		if text == "" || seen[text] {
			return
		}
		seen[text] = true
		s.needles = append(s.needles, needle{secret: secret, form: form, text: text})
	}
	for _, sec := range secrets {
		if len(sec.Value) < MinSecretLength {
			s.skipped = append(s.skipped, sec.Name)
			continue
		}
		add(sec.Name, "as written", sec.Value)
		for _, enc := range []struct {
			name string
			e    *base64.Encoding
		}{{"base64", base64.RawStdEncoding}, {"base64url", base64.RawURLEncoding}} {
			for k := range 3 {
				add(sec.Name, fmt.Sprintf("%s, offset %d", enc.name, k), embeddedBase64(enc.e, []byte(sec.Value), k))
			}
		}
	}
	return s
}

// embeddedBase64 is the run of characters that encodes value alone when k
// bytes precede it in the encoded text: each base64 character holds 6 bits,
// so the characters from the first one that starts at or after bit 8k to the
// last one that ends by bit 8(k+n).
func embeddedBase64(e *base64.Encoding, value []byte, k int) string {
	enc := e.EncodeToString(append(make([]byte, k), value...))
	start, end := (8*k+5)/6, 8*(k+len(value))/6
	return enc[start:end]
}

// Secrets is how many secrets the scanner looks for.
func (s *Scanner) Secrets() int {
	names := map[string]bool{}
	for _, n := range s.needles {
		names[n.secret] = true
	}
	return len(names)
}

// Skipped names the secrets too short to be looked for.
func (s *Scanner) Skipped() []string { return s.skipped }

// Scan reads r line by line (lines of any length) and returns the number
// of lines and where a secret occurs; where names the source in findings.
func (s *Scanner) Scan(where string, r io.Reader) (int, []Finding, error) {
	br := bufio.NewReader(r)
	var findings []Finding
	n := 0
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			n++
			findings = append(findings, s.ScanString(where, n, line)...)
		}
		if err == io.EOF {
			return n, findings, nil
		}
		if err != nil {
			return n, findings, fmt.Errorf("reading %s: %w", where, err)
		}
	}
}

// ScanString returns the secrets in text, one finding per secret and form.
func (s *Scanner) ScanString(where string, line int, text string) []Finding {
	var out []Finding
	for _, nd := range s.needles {
		if strings.Contains(text, nd.text) {
			out = append(out, Finding{Secret: nd.secret, Form: nd.form, Where: where, Line: line})
		}
	}
	return out
}

// ScanLogFiles scans every log file (*.log) under dir: the logs the e2e
// framework saves. Other files there, such as the rendered cluster
// templates, hold the identity Secret by design. A missing dir has nothing.
func (s *Scanner) ScanLogFiles(dir string) (files, lines int, findings []Finding, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path == dir {
				return filepath.SkipDir
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".log") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }()
		n, found, err := s.Scan(path, f)
		files++
		lines += n
		findings = append(findings, found...)
		return err
	})
	return files, lines, findings, err
}
