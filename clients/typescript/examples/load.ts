// The shortest complete program using the Node client: jobs fan out under
// an "agents" lease, spend a shared http budget on a simulated service
// through the governed fetch, retry what the service refuses, and hold "db"
// leases to store what they fetched.
//
//	npm run build && node dist/examples/load.js [workers] [budget] [jobs]
//
// It reads GOVERNOR_ADDR and GOVERNOR_API_KEY like every client.

import { createServer } from "node:http";
import { DeniedError, RetryBudgetError, dial, governedFetch, retry, task, withLease } from "../src/index.js";

const [workers, budget, jobs] = [process.argv[2] ?? "4", process.argv[3] ?? "50", process.argv[4] ?? "10"].map(Number);

// A simulated downstream that answers 503 beyond three requests at once.
let inflight = 0;
let most = 0;
const service = createServer((_req, res) => {
  most = Math.max(most, ++inflight);
  setTimeout(() => {
    res.writeHead(inflight-- > 3 ? 503 : 200).end("page");
  }, 2);
});
await new Promise<void>((resolve) => service.listen(0, "127.0.0.1", resolve));
const address = service.address();
const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`;

const fetch = governedFetch();
const client = await dial();
let pages = 0;
let stored = 0;
try {
  await client.task({ name: `load-${Date.now()}`, quotas: { http: budget, retry: budget }, limits: { agents: workers, db: 2 } }, () =>
    Promise.all(
      Array.from({ length: jobs }, (_, i) =>
        withLease("agents", () =>
          task({ name: `job-${i}` }, async () => {
            for (let page = 0; page < 10; page++) {
              const body = await retry(async () => {
                const res = await fetch(url);
                if (!res.ok) {
                  throw new Error(`service answered ${res.status}`);
                }
                return res.text();
              }, { attempts: 3, baseMs: 1, maxMs: 20 }).catch((e) => {
                if (e instanceof DeniedError || e instanceof RetryBudgetError) {
                  return undefined; // the budget is spent: this job is over
                }
                throw e;
              });
              if (body === undefined) {
                return;
              }
              pages++;
              await withLease("db", () => stored++);
            }
          }),
        ),
      ),
    ),
  );
  console.log(`jobs: ${jobs}, at most ${workers} at once; ${pages} pages of a budget of ${budget}, ${stored} stored`);
  console.log(`service: at most ${most} requests at once`);
} finally {
  await client.close();
  service.close();
}
