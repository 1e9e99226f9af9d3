// Benchmark: the client's own overhead on a consume over loopback, against
// a raw call of the generated Connect client on the same kind of transport
// (HTTP/2, binary), each carrying a request id.
//
//	npm run bench [-- rounds calls amount]
//
// An amount of 0 (a peek) writes nothing to governord's record, so the
// time left is the RPC's and the client's; 1 adds a durable charge.
// Rounds alternate between the two so that drift in the machine's load
// falls on both; the report is each one's median time per call.

import { performance } from "node:perf_hooks";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { GovernorService } from "../src/gen/governor/v1/governor_pb.js";
import { consume, dial } from "../src/index.js";
import { Governord, teamKey } from "../test/harness.js";

const rounds = Number(process.argv[2] ?? 7);
const calls = Number(process.argv[3] ?? 2000);
const amount = Number(process.argv[4] ?? 1);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < calls; i++) {
    await fn();
  }
  return ((performance.now() - start) * 1000) / calls;
}

const g = await Governord.start();
try {
  const raw = createClient(GovernorService, createConnectTransport({ baseUrl: `http://${g.addr}`, httpVersion: "2", useBinaryFormat: true }));
  // A session as long as the bench, so the raw calls need no heartbeat.
  const opened = await raw.openSession({ ttl: { seconds: 3600n } }, { headers: { authorization: `Bearer ${teamKey}` } });
  const headers = { authorization: `Bearer ${opened.token}` };
  const client = await dial({ addr: g.addr, apiKey: teamKey });
  await client.task({ name: "bench" }, async (t) => {
    let n = 0;
    const rawCall = () => raw.consume({ nodeId: t.id, resource: "bench", amount: BigInt(amount), requestId: `raw-${n++}` }, { headers });
    const clientCall = () => consume("bench", amount);
    await time(rawCall);
    await time(clientCall);
    const rawUs: number[] = [];
    const clientUs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      rawUs.push(await time(rawCall));
      clientUs.push(await time(clientCall));
    }
    const a = median(rawUs);
    const b = median(clientUs);
    console.log(`raw Connect consume: ${a.toFixed(1)} µs/call (amount ${amount}, median of ${rounds} rounds of ${calls})`);
    console.log(`client consume:      ${b.toFixed(1)} µs/call`);
    console.log(`client overhead:     ${(((b - a) / a) * 100).toFixed(1)}% (ratio ${(b / a).toFixed(3)})`);
  });
  await client.close();
} finally {
  await g.stop();
}
