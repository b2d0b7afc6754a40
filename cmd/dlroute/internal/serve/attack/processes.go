package attack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proberEnv, in a process's environment, makes the test binary a
// prober (ChildMain): the URLs whose /healthz it asks, one space apart;
// clientEnv makes it an attack's clients: the attack's name and serve's
// URL.
const (
	proberEnv = "DLROUTE_ATTACK_PROBE"
	clientEnv = "DLROUTE_ATTACK_CLIENT"
)

// ClientNice is how much lower than serve's the priority (nice value) of
// an attack's clients is, on Linux: as if they ran on another machine.
// On the two processors, 300 clients that each send 4 MiB
// otherwise take half of them from serve, and what the probes measure is
// the attacker's machine as much as serve.
const ClientNice = 10

// healthProbes asks /healthz at each of urls every 20 ms, as a load
// balancer asks, from a process of its own (this executable again, which
// calls ChildMain): the attack's 300 connections run in this process,
// and a probe here would wait on them for a processor, as much as on
// serve. stop ends the probes and returns what each saw, by URL.
func healthProbes(urls ...string) (stop func() (map[string]Probes, error), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), proberEnv+"="+strings.Join(urls, " "))
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return func() (map[string]Probes, error) {
		in.Close()
		if err := cmd.Wait(); err != nil {
			return nil, fmt.Errorf("the /healthz prober: %v\n%s", err, out.String())
		}
		var seen map[string]Probes
		if err := json.Unmarshal([]byte(out.String()), &seen); err != nil {
			return nil, fmt.Errorf("the /healthz prober said %q: %v", out.String(), err)
		}
		return seen, nil
	}, nil
}

// ChildMain runs the prober healthProbes starts, or the clients
// attackProcess starts, if this process is one, and reports whether it
// was: TestMain calls it first.
func ChildMain() bool {
	if attack, url, ok := strings.Cut(os.Getenv(clientEnv), " "); ok {
		runClients(attack, url)
		return true
	}
	urls := strings.Fields(os.Getenv(proberEnv))
	if len(urls) == 0 {
		return false
	}
	probe(urls)
	return true
}

// probe asks /healthz at each of urls until standard input ends, then
// writes what it saw, as JSON, to standard output.
func probe(urls []string) {
	ctx, stop := context.WithCancel(context.Background())
	probers := make([]prober, len(urls))
	var wg sync.WaitGroup
	for i, u := range urls {
		wg.Go(func() { probers[i].run(ctx, 20*time.Millisecond, probeHealth(u)) })
	}
	io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	stop()
	wg.Wait()
	seen := map[string]Probes{}
	for i, u := range urls {
		seen[u] = probers[i].result()
	}
	json.NewEncoder(os.Stdout).Encode(seen)
}

// clientsDone is what an attack's clients write when they are done.
type clientsDone struct {
	Answers map[string]int
	Error   string
}

// clients are the attacks whose clients run in a process of their own.
var clients = map[string]func(ctx context.Context, url string, count func(status int, code string)) error{
	"bodies": sendBodies,
}

// attackProcess runs the clients of attack against t in a process of
// their own, ClientNice below this one's priority, and counts their
// answers into t's.
func (t *Target) attackProcess(ctx context.Context, attack string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self)
	cmd.Env = append(os.Environ(), clientEnv+"="+attack+" "+t.URL)
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the %s clients: %v\n%s", attack, err, stderr.String())
	}
	var done clientsDone
	if err := json.Unmarshal([]byte(out.String()), &done); err != nil {
		return fmt.Errorf("the %s clients said %q: %v", attack, out.String(), err)
	}
	for answer, n := range done.Answers {
		t.mu.Lock()
		t.answers[answer] += n
		t.mu.Unlock()
	}
	if done.Error != "" {
		return errors.New(done.Error)
	}
	return nil
}

// runClients is the process attackProcess starts: it lowers its priority
// by ClientNice, runs attack's clients against url, and writes what they
// were answered, and the first error, as JSON to standard output.
func runClients(attack, url string) {
	lowerPriority(ClientNice)
	var mu sync.Mutex
	done := clientsDone{Answers: map[string]int{}}
	err := clients[attack](context.Background(), url, func(status int, code string) {
		mu.Lock()
		defer mu.Unlock()
		done.Answers[strings.TrimSpace(fmt.Sprint(status)+" "+code)]++
	})
	if err != nil {
		done.Error = err.Error()
	}
	json.NewEncoder(os.Stdout).Encode(done)
}

// lowerPriority adds by to the nice value of each of this process's
// threads, on Linux, where it is a thread's (the threads made later
// inherit it); elsewhere, or past the lowest priority, it does what it
// can.
func lowerPriority(by int) {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		// getpriority(2) returns 20 - nice.
		if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil {
			syscall.Setpriority(syscall.PRIO_PROCESS, tid, min(20-p+by, 19))
		}
	}
}
