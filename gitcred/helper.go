package gitcred

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// RunHelper is `atoll git-credential ACTION`, a git credential helper
// (https://git-scm.com/docs/git-credential): for "get" it reads git's
// key=value lines from stdin and, when Atoll's socket answers for the
// protocol and host asked, prints username and password. A host Atoll does
// not serve gets no answer, so git goes on to its other helpers. "store"
// and "erase" do nothing: Atoll owns its credentials.
func RunHelper(args []string, stdin io.Reader, stdout io.Writer, getenv func(string) string) error {
	if len(args) != 1 {
		return errors.New("usage: atoll git-credential get|store|erase (run by git as a credential helper)")
	}
	switch args[0] {
	case "store", "erase":
		_, err := io.Copy(io.Discard, stdin)
		return err
	case "get":
	default:
		return nil // git's protocol: ignore unknown actions
	}
	attrs, err := readAttrs(stdin)
	if err != nil {
		return fmt.Errorf("git-credential: reading git's request: %w", err)
	}
	if attrs["protocol"] == "" || attrs["host"] == "" {
		return nil
	}
	socket, nonce := getenv(EnvSocket), getenv(EnvNonce)
	if socket == "" || nonce == "" {
		return fmt.Errorf("git-credential: %s and %s must be set: the helper only answers for runs Atoll started", EnvSocket, EnvNonce)
	}
	res, err := ask(socket, request{Nonce: nonce, Protocol: attrs["protocol"], Host: attrs["host"]})
	if err != nil {
		return fmt.Errorf("git-credential: asking Atoll for %s://%s: %w", attrs["protocol"], attrs["host"], err)
	}
	if res.Error != "" {
		return fmt.Errorf("git-credential: %s://%s: %s", attrs["protocol"], attrs["host"], res.Error)
	}
	if res.Password == "" {
		return nil
	}
	_, err = fmt.Fprintf(stdout, "username=%s\npassword=%s\n", res.Username, res.Password)
	return err
}

// readAttrs reads key=value lines up to a blank line or the end.
func readAttrs(r io.Reader) (map[string]string, error) {
	attrs := map[string]string{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			attrs[k] = v
		}
	}
	return attrs, sc.Err()
}

func ask(socket string, req request) (response, error) {
	var res response
	c, err := net.DialTimeout("unix", socket, 10*time.Second)
	if err != nil {
		return res, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return res, err
	}
	err = json.NewDecoder(c).Decode(&res)
	return res, err
}
