package governor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	governorv1 "governor.dev/governor/internal/gen/governor/v1"
)

// workerAddrEnv, when set, makes TestOwnerWorkerProcess a worker of
// TestKilledWorkersLeaveNoTasks: it creates a task on that governord and
// waits to be killed.
const workerAddrEnv = "GOVERNOR_TEST_WORKER_ADDR"

func TestOwnerWorkerProcess(t *testing.T) {
	addr := os.Getenv(workerAddrEnv)
	if addr == "" {
		t.Skip("runs only as a worker process of TestKilledWorkersLeaveNoTasks")
	}
	// A TTL a loaded machine cannot outlast between heartbeats of a live worker.
	c, err := Dial(context.Background(), WithAddr(addr), WithAPIKey(teamKey), WithSessionTTL(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.NewTask(context.Background(), Spec{Name: fmt.Sprint("worker-", os.Getpid())}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	time.Sleep(time.Minute)
}

// TestKilledWorkersLeaveNoTasks: worker processes, each with a task and no
// deadline, are killed with SIGKILL. Once their sessions lapse governord
// cancels their tasks ("owner's session ended"), and after the retention
// none is left in the tree.
func TestKilledWorkersLeaveNoTasks(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Retention.Nodes = 300 * time.Millisecond
	g := newGovernordWith(t, cfg)
	const workers = 5
	var procs []*exec.Cmd
	for range workers {
		cmd := exec.Command(os.Args[0], "-test.run=^TestOwnerWorkerProcess$")
		cmd.Env = append(os.Environ(), workerAddrEnv+"="+g.addr)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("worker: %q, %v", line, err)
		}
		procs = append(procs, cmd)
	}
	api := adminAPI(t, g.addr)
	tasks := func() (active, ended int) {
		t.Helper()
		root, err := api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{IncludeChildren: true}))
		if err != nil {
			t.Fatal(err)
		}
		for _, tenant := range root.Msg.Children {
			res, err := api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: tenant.Id, IncludeChildren: true}))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range res.Msg.Children {
				switch {
				case !strings.HasPrefix(n.Name, "worker-"):
				case n.State == governorv1.NodeState_NODE_STATE_ACTIVE:
					active++
				case n.EndedReason == "owner's session ended":
					ended++
				default:
					t.Fatalf("task %q ended %s, %q", n.Name, n.State, n.EndedReason)
				}
			}
		}
		return active, ended
	}
	if active, _ := tasks(); active != workers {
		t.Fatalf("%d workers' tasks active, want %d", active, workers)
	}
	for _, cmd := range procs {
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		active, ended := tasks()
		if active == 0 && ended == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("15s after the kill: %d tasks active, %d ended and not yet removed", active, ended)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDetachedTaskOutlivesItsClient: when a client closes, the task it
// made ends with its session, and the one it made with Spec.Detached stays.
func TestDetachedTaskOutlivesItsClient(t *testing.T) {
	g := newGovernord(t)
	c, err := Dial(context.Background(), WithAddr(g.addr), WithAPIKey(teamKey))
	if err != nil {
		t.Fatal(err)
	}
	_, owned, err := c.NewTask(context.Background(), Spec{Name: "owned"})
	if err != nil {
		t.Fatal(err)
	}
	_, kept, err := c.NewTask(context.Background(), Spec{Name: "kept", Detached: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	api := adminAPI(t, g.addr)
	for task, want := range map[*Task]governorv1.NodeState{owned: governorv1.NodeState_NODE_STATE_CANCELLED, kept: governorv1.NodeState_NODE_STATE_ACTIVE} {
		res, err := api.GetNode(context.Background(), connect.NewRequest(&governorv1.GetNodeRequest{NodeId: task.ID()}))
		if err != nil {
			t.Fatal(err)
		}
		if res.Msg.Node.State != want {
			t.Fatalf("task %q is %s after its client closed, want %s", res.Msg.Node.Name, res.Msg.Node.State, want)
		}
	}
}
