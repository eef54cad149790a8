/* SPDX-License-Identifier: MIT */
/* Write a training-style log of at least SIZE_MB MiB to stdout, ending in a
 * real failure (a CUDA OOM on one rank followed by NCCL watchdog timeouts
 * on the others), and print what it wrote, line kind by line kind, to
 * stderr.
 *
 * usage: genlog SIZE_MB [SEED] [MIX]
 *
 * MIX "plain" (the default): training step lines (some with a logging
 * timestamp), tqdm bars redrawn with '\r' (ASCII and Unicode blocks),
 * timestamped logging lines, and lines with torchrun's "[rankN]:" or
 * "[defaultN]:" prefixes.
 * MIX "noisy": the same, plus 15 % of lines from NCCL_DEBUG=INFO (the
 * "host:pid:tid [dev] NCCL INFO ..." format of NCCL 2.18-2.21: init,
 * channels, rings, trees, proxy and collective traces) and 10 % of
 * Python warnings (the warnings module's "FILE:LINE: Category: message"
 * line and the source line it quotes), as a job run with
 * NCCL_DEBUG=INFO and a few library deprecations prints them.  Each
 * line kind is drawn independently, so the fractions hold over any
 * stretch of the log. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t s = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return (uint32_t)(s % n);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Python's warnings.showwarning(): "FILE:LINE: CATEGORY: MESSAGE" and
 * then the quoted source line, indented by two blanks. */
static const char *const pywarn[][2] = {
        {"/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:"
         "464: UserWarning: torch.utils.checkpoint: the use_reentrant "
         "parameter should be passed explicitly. In version 2.4 we will "
         "raise an exception if use_reentrant is not passed. "
         "use_reentrant=False is recommended, but if you need to preserve "
         "the current default behavior, you can pass use_reentrant=True. "
         "Refer to docs for more details on the differences between the "
         "two variants.",
         "  warnings.warn("},
        {"/opt/conda/lib/python3.10/site-packages/torch/autograd/graph.py:"
         "744: UserWarning: Grad strides do not match bucket view strides. "
         "This may indicate grad was not created according to the gradient "
         "layout contract, or that the param's strides changed since DDP "
         "was constructed.  This is not an error, but may impair "
         "performance.",
         "  return Variable._execution_engine.run_backward(  # Calls into "
         "the C++ engine to run the backward pass"},
        {"/opt/conda/lib/python3.10/site-packages/torch/optim/"
         "lr_scheduler.py:143: UserWarning: Detected call of "
         "`lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
         "and later, you should call them in the opposite order: "
         "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do "
         "this will result in PyTorch skipping the first value of the "
         "learning rate schedule. See more details at "
         "https://pytorch.org/docs/stable/"
         "optim.html#how-to-adjust-learning-rate",
         "  warnings.warn(\"Detected call of `lr_scheduler.step()` before "
         "`optimizer.step()`. \""},
        {"/opt/conda/lib/python3.10/site-packages/torch/utils/data/"
         "dataloader.py:558: UserWarning: This DataLoader will create 16 "
         "worker processes in total. Our suggested max number of worker in "
         "current system is 8, which is smaller than what this DataLoader "
         "is going to create. Please be aware that excessive worker "
         "creation might get DataLoader running slow or even freeze, lower "
         "the worker number to avoid potential slowness/freeze if "
         "necessary.",
         "  warnings.warn(_create_warning_msg("},
        {"/opt/conda/lib/python3.10/site-packages/torch/nn/functional.py:"
         "5476: UserWarning: 1Torch was not compiled with flash attention. "
         "(Triggered internally at ../aten/src/ATen/native/transformers/"
         "cuda/sdp_utils.cpp:263.)",
         "  attn_output = scaled_dot_product_attention("},
        {"/opt/conda/lib/python3.10/site-packages/torch/cuda/memory.py:330: "
         "FutureWarning: torch.cuda.reset_max_memory_allocated now calls "
         "torch.cuda.reset_peak_memory_stats, which resets /all/ peak "
         "memory stats.",
         "  warnings.warn("},
        {"/opt/conda/lib/python3.10/site-packages/torch/_utils.py:831: "
         "UserWarning: TypedStorage is deprecated. It will be removed in "
         "the future and UntypedStorage will be the only storage class. "
         "This should only matter to you if you are using storages "
         "directly.  To access UntypedStorage directly, use "
         "tensor.untyped_storage() instead of tensor.storage()",
         "  return self.fget.__get__(instance, owner)()"},
        {"/opt/conda/lib/python3.10/site-packages/transformers/"
         "modeling_utils.py:1052: FutureWarning: The `device` argument is "
         "deprecated and will be removed in v5 of Transformers.",
         "  warnings.warn("},
        {"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/"
         "_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` "
         "for ``ShardingStrategy``, full_state_dict will be returned.",
         "  warnings.warn("},
        {"/home/u/proj/data.py:88: DeprecationWarning: "
         "np.find_common_type is deprecated.  Please use `np.result_type` "
         "or `np.promote_types`.",
         "  dtype = np.find_common_type(types, [])"},
        {"/opt/conda/lib/python3.10/site-packages/numpy/core/"
         "fromnumeric.py:3504: RuntimeWarning: Mean of empty slice.",
         "  return _methods._mean(a, axis=axis, dtype=dtype,"},
        {"/opt/conda/lib/python3.10/site-packages/torch/amp/"
         "grad_scaler.py:132: FutureWarning: "
         "`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
         "`torch.amp.GradScaler('cuda', args...)` instead.",
         "  scaler = torch.cuda.amp.GradScaler()"},
};

static const char *const host = "node017";
static unsigned pid, tid;

/* One NCCL_DEBUG=INFO line of rank RANK (NCCL's src/debug.cc prefix:
 * "%s:%d:%d [%d] NCCL INFO "). */
static int nccl_info(unsigned rank)
{
	unsigned dev = rank % 8, peer = (rank + 1) % 8;
	uint64_t comm = 0x55d1c8e0b2d0ull + rnd(64) * 0x1000ull;
	int n = printf("%s:%u:%u [%u] NCCL INFO ", host, pid + dev,
	               rnd(4) ? tid + dev : pid + dev, dev);

	switch (rnd(20)) {
	case 0:
		return n + printf("Channel %02u/%02u :    0   1   2   3   4   "
		                  "5   6   7\n",
		                  rnd(32), 32u);
	case 1:
		return n + printf("Channel %02u/0 : %u[%u] -> %u[%u] via "
		                  "P2P/IPC/read\n",
		                  rnd(32), rank, dev, peer, peer);
	case 2:
		return n + printf("Channel %02u/1 : %u[%u] -> %u[%u] [receive] "
		                  "via NET/IB/%u/GDRDMA\n",
		                  rnd(32), peer + 8, peer, rank, dev, rnd(4));
	case 3:
		return n +
		       printf("Trees [0] %u/-1/-1->%u->-1 [1] %u/-1/-1->%u->"
		              "-1 [2] -1/-1/-1->%u->%u [3] -1/-1/-1->%u->%u\n",
		              peer, rank, peer, rank, rank, peer, rank, peer);
	case 4:
		return n + printf("Connected all rings\n");
	case 5:
		return n + printf("Connected all trees\n");
	case 6:
		return n + printf("threadThresholds 8/8/64 | 64/8/64 | 512 | "
		                  "512\n");
	case 7:
		return n +
		       printf("24 coll channels, 0 collnet channels, 0 nvls "
		              "channels, 32 p2p channels, 32 p2p channels per "
		              "peer\n");
	case 8:
		return n + printf("comm 0x%llx rank %u nranks 16 cudaDev %u "
		                  "nvmlDev %u busId %x000 commId 0x%llx - Init "
		                  "%s\n",
		                  (unsigned long long)comm, rank, dev, dev,
		                  0x1b + 0x20 * dev,
		                  (unsigned long long)comm * 0x9e3779b1ull,
		                  rnd(2) ? "START" : "COMPLETE");
	case 9:
		return n + printf("Setting affinity for GPU %u to "
		                  "ffff,ffffffff,00000000,ffffffff\n",
		                  dev);
	case 10:
		return n +
		       printf("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB "
		              "[2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB "
		              "ib0:10.1.0.17<0>\n");
	case 11:
		return n + printf("Using network IB\n");
	case 12:
		return n + printf("P2P Chunksize set to 524288\n");
	case 13:
		return n + printf("NCCL_IB_HCA set by environment to "
		                  "mlx5_0,mlx5_1,mlx5_2,mlx5_3\n");
	case 14:
		return n + printf("Allocated %u bytes of shareable memory\n",
		                  5767524u + 4096 * rnd(16));
	case 15:
		return n + printf("comm 0x%llx rank %u nRanks 16 nNodes 2 "
		                  "localRanks 8 localRank %u MNNVL 0\n",
		                  (unsigned long long)comm, rank, dev);
	default: /* NCCL_DEBUG_SUBSYS=COLL: one line per collective */
		return n +
		       printf("AllReduce: opCount %x sendbuff 0x7f%07x000 "
		              "recvbuff 0x7f%07x000 count %u datatype 7 op 0 "
		              "root 0 comm 0x%llx [nranks=16] stream 0x%llx\n",
		              rnd(1 << 20), rnd(1u << 28), rnd(1u << 28),
		              (1u << (10 + rnd(15))), (unsigned long long)comm,
		              (unsigned long long)comm + 0xe00);
	}
}

/* A logging timestamp: "2025-03-01 12:00:00,123". */
static unsigned clock_s = 43200;

static int stamp(void)
{
	clock_s += rnd(3);
	return printf("2025-03-01 %02u:%02u:%02u,%03u", clock_s / 3600 % 24,
	              clock_s / 60 % 60, clock_s % 60, rnd(1000));
}

static unsigned epoch = 1, step;

static int training_line(void)
{
	int n = 0;

	if (rnd(4) == 0)
		n += stamp() + printf(" - __main__ - INFO - ");
	step++;
	n += printf("Epoch %u | step %u/%u | loss %.4f | lr %.3e | "
	            "grad_norm %.3f | %.1f samples/s | %.0f tok/s | mem %.2f "
	            "GiB\n",
	            epoch, step, 5000u,
	            2.5 / (1 + step / 1000.0) + rnd(1000) / 1e4,
	            3e-4 * (1 - step / 6000.0), 0.5 + rnd(3000) / 1e3,
	            180 + rnd(400) / 10.0, 9.2e4 + rnd(8000),
	            60 + rnd(900) / 100.0);
	if (step >= 5000) {
		step = 0;
		epoch++;
	}
	return n;
}

/* A tqdm bar redrawn 20 times on one line, joined by '\r'. */
static int tqdm_line(void)
{
	static const char *const full = "\xe2\x96\x88"; /* U+2588 */
	unsigned total = 200 + rnd(800);
	int unicode = rnd(2), n = 0;

	for (unsigned k = 1; k <= 20; k++) {
		unsigned done = total * k / 20;
		char bar[64] = "";

		for (unsigned j = 0; j < 10; j++)
			strcat(bar, j < k / 2 ? (unicode ? full : "#") : " ");
		n += printf("Eval %u: %3u%%|%s| %u/%u [%02u:%02u<%02u:%02u, "
		            "%.2fit/s]%s",
		            epoch, 100 * done / total, bar, done, total, k / 60,
		            k % 60, (20 - k) / 60, (20 - k) % 60,
		            5 + rnd(500) / 100.0, k == 20 ? "\n" : "\r");
	}
	return n;
}

static int logging_line(void)
{
	int n = 0;

	switch (rnd(5)) {
	case 0:
		return stamp() +
		       printf(" - INFO - torch.distributed.elastic.agent."
		              "server.api - [default] Rendezvous complete for "
		              "workers. Result: restart_count=0 "
		              "master_addr=node017 master_port=29500\n");
	case 1:
		n = printf("[");
		n += stamp();
		return n +
		       printf("] [INFO] [logging.py:96:log_dist] [Rank 0] "
		              "step=%u, skipped=0, lr=[0.00029], mom=[(0.9, "
		              "0.95)]\n",
		              step);
	case 2:
		return printf("wandb: Syncing run gentle-sound-42 to "
		              "https://wandb.example.org/team/proj/runs/"
		              "%08x\n",
		              rnd(1u << 31));
	case 3:
		n = stamp();
		return n + printf(" - INFO - Saving model checkpoint to "
		                  "/scratch/run42/ckpt/checkpoint-%u\n",
		                  step);
	default:
		return printf("[W reducer.cpp:1360] Warning: "
		              "find_unused_parameters=True was specified in "
		              "DDP constructor, but did not find any unused "
		              "parameters in the forward pass. (function "
		              "operator())\n");
	}
}

/* torchrun's per-rank prefix. */
static int rank_prefix(unsigned rank)
{
	return printf(rnd(3) ? "[rank%u]:" : "[default%u]:", rank);
}

int main(int argc, char **argv)
{
	uint64_t target = (argc > 1 ? strtoull(argv[1], NULL, 10) : 400) << 20;
	int noisy = argc > 3 && !strcmp(argv[3], "noisy");
	uint64_t written = 0, lines = 0, n_nccl = 0, n_warn = 0, n_rank = 0;
	static char buf[1 << 16];

	if (argc > 3 && !noisy && strcmp(argv[3], "plain")) {
		fprintf(stderr, "usage: genlog SIZE_MB [SEED] [plain|noisy]\n");
		return 2;
	}
	if (argc > 2)
		s ^= strtoull(argv[2], NULL, 10) * 0x9E3779B97F4A7C15ull;
	pid = 30000 + rnd(20000);
	tid = pid + 60;
	setvbuf(stdout, buf, _IOFBF, sizeof(buf));
	while (written < target) {
		uint32_t r = rnd(2000);
		unsigned rank = rnd(16);
		int n = 0;

		lines++;
		/* noisy: of 2000 draws, 315 NCCL INFO lines and 105 warnings
		 * of two lines each, so 15 % and 10 % of 2105 lines */
		if (noisy && r < 315) {
			n_nccl++;
			if (rnd(4) == 0) {
				n += rank_prefix(rank);
				n_rank++;
			}
			n += nccl_info(rank);
		} else if (noisy && r < 420) {
			const char *const *w = pywarn[rnd(N(pywarn))];

			n_warn += 2;
			lines++;
			n += printf("%s\n%s\n", w[0], w[1]);
		} else {
			/* the plain mix, scaled to the rest of the lines */
			uint32_t q = noisy ? (r - 420) * 1000 / 1580 : r / 2;

			if (q >= 880) {
				n += rank_prefix(rank);
				n_rank++;
			}
			if (q < 700 || q >= 880)
				n += training_line();
			else if (q < 750)
				n += tqdm_line();
			else
				n += logging_line();
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
	fflush(stdout);
	fprintf(stderr,
	        "genlog: %s mix, %llu bytes, %llu lines: %.1f %% NCCL INFO, "
	        "%.1f %% Python warnings, %.1f %% rank-prefixed\n",
	        noisy ? "noisy" : "plain", (unsigned long long)written,
	        (unsigned long long)lines, 100.0 * n_nccl / lines,
	        100.0 * n_warn / lines, 100.0 * n_rank / lines);
	return 0;
}
