#!/bin/sh
# Starts a cluster of three governord on this machine, consumes through it
# once a second, kills the leader with SIGKILL after five seconds, and goes
# on consuming through the two left. Run it from the repository's root;
# Ctrl-C stops everything. State is kept in ./governor-cluster.
set -u
go build -o governor-cluster/governord ./cmd/governord || exit 1
pids=""
for n in 1 2 3; do
	governor-cluster/governord -config examples/cluster/n$n.yaml 2>>governor-cluster/n$n.log &
	pids="$pids $!"
done
trap 'kill $pids 2>/dev/null; exit' INT TERM EXIT

key=team-a-key-0123456789
# call METHOD BODY: sends the call to each member in turn until one leads.
call() {
	for port in 7700 7702 7704; do
		out=$(curl -s -f -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
			-d "$2" "http://127.0.0.1:$port/governor.v1.GovernorService/$1") && {
			echo "$port $out"
			return 0
		}
	done
	return 1
}

i=0
while :; do
	i=$((i + 1))
	if answer=$(call Consume "{\"resource\":\"http\",\"amount\":1,\"request_id\":\"demo-$$-$i\"}"); then
		echo "consume $i answered by the leader on port $answer"
	else
		echo "consume $i: no leader yet"
	fi
	if [ "$i" -eq 5 ]; then
		port=${answer%% *}
		pid=$(echo $pids | cut -d' ' -f$(((port - 7700) / 2 + 1)))
		echo "kill -9 the leader (port $port, pid $pid)"
		kill -9 "$pid"
	fi
	sleep 1
done
