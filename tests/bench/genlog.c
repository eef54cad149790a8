/* Write a training-style log of at least SIZE bytes to stdout: epoch/step
 * lines with changing numbers, tqdm progress bars joined by '\r', periodic
 * warnings and rank-prefixed lines, and one real error near the end (a
 * CUDA OOM on one rank followed by NCCL watchdog timeouts).
 *
 * usage: genlog SIZE_MB [SEED] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t s = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (uint32_t)(s % n);
}

static const char *const warnings[] = {
        "/usr/lib/python3/site-packages/torch/nn/modules/module.py:1511: UserWarning: "
        "Using a target size that is different to the input size. This will likely "
        "lead to incorrect results due to broadcasting.\n",
        "[W reducer.cpp:1360] Warning: find_unused_parameters=True was specified in DDP "
        "constructor, but did not find any unused parameters in the forward pass.\n",
        "WARNING:root:Checkpoint directory /scratch/run42/ckpt already exists, "
        "files will be overwritten\n",
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete "
        "for workers. Result: restart_count=0 master_addr=node017 master_port=29500\n",
        "wandb: Syncing run gentle-sound-42 to https://wandb.example.org/team/proj\n",
        "[2025-03-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=1200, "
        "skipped=0, lr=[0.00029], mom=[(0.9, 0.95)]\n",
};

int main(int argc, char **argv)
{
	uint64_t target = (argc > 1 ? strtoull(argv[1], NULL, 10) : 400) << 20;
	uint64_t written = 0;
	unsigned epoch = 1, step = 0;
	static char buf[1 << 16];

	if (argc > 2)
		s ^= strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull;
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	while (written < target) {
		int n = 0;
		uint32_t r = rnd(1000);

		if (r < 700) {
			step++;
			n = printf(
			        "Epoch %u | step %u/%u | loss %.4f | lr %.3e | "
			        "grad_norm %.3f | %.1f samples/s | %.0f tok/s | "
			        "mem %.2f GiB\n",
			        epoch, step, 5000u,
			        2.5 / (1 + step / 1000.0) + rnd(1000) / 1e4,
			        3e-4 * (1 - step / 6000.0),
			        0.5 + rnd(3000) / 1e3, 180 + rnd(400) / 10.0,
			        9.2e4 + rnd(8000), 60 + rnd(900) / 100.0);
			if (step >= 5000) {
				step = 0;
				epoch++;
			}
		} else if (r < 750) {
			/* a tqdm bar redrawn 20 times on one line */
			unsigned total = 200 + rnd(800);
			for (unsigned k = 1; k <= 20; k++) {
				unsigned done = total * k / 20;
				char bar[11];
				for (int j = 0; j < 10; j++)
					bar[j] = j < (int)(k / 2) ? '#' : ' ';
				bar[10] = 0;
				n += printf(
				        "Eval %u: %3u%%|%s| %u/%u [%02u:%02u<%02u:%02u, "
				        "%.2fit/s]%s",
				        epoch, 100 * done / total, bar, done,
				        total, k / 60, k % 60, (20 - k) / 60,
				        (20 - k) % 60, 5 + rnd(500) / 100.0,
				        k == 20 ? "\n" : "\r");
			}
		} else if (r < 850) {
			n = printf("%s", warnings[rnd(sizeof(warnings) /
			                              sizeof(warnings[0]))]);
		} else {
			unsigned rank = rnd(8);
			n = printf(
			        "[rank%u]: [%u/%u] data shard %u loaded, %u samples, "
			        "%.1f MB/s, queue depth %u\n",
			        rank, rank, 8u, rnd(4096), 10000 + rnd(90000),
			        100 + rnd(9000) / 10.0, rnd(64));
		}
		written += (uint64_t)n;
	}
	/* The failure: one rank runs out of memory, the others time out. */
	printf("[rank3]: Traceback (most recent call last):\n"
	       "[rank3]:   File \"/home/u/train.py\", line 211, in <module>\n"
	       "[rank3]:     loss.backward()\n"
	       "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to "
	       "allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB of "
	       "which 1.02 GiB is free.\n");
	for (int i = 0; i < 40; i++)
		printf("[rank%d]:[E ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog "
		       "caught collective operation timeout: WorkNCCL(SeqNum=%d, "
		       "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
		       "ran for 600340 milliseconds before timing out.\n",
		       i % 8, i % 8, 88231 + i);
	printf("srun: error: node017: task 3: Exited with exit code 1\n");
	return 0;
}
