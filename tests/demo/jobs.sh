# SPDX-License-Identifier: MIT
# The demo's jobs: name, sbatch options, and the script body.  Each is an
# ordinary job script; gpualert needs no change to it.  Sourced by
# tests/demo.sh.

job_keyerror() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=train-resnet
/usr/bin/python3 - <<'EOF_PY'
import sys, time
labels = {"cat": 0, "dog": 1}
for step in range(1, 6):
    print(f"epoch 0 step {step}/100 loss {2.3 / step:.4f} lr 1e-3", flush=True)
    time.sleep(0.1)
batch = [("cat", 1), ("horse", 2)]
targets = [labels[name] for name, _ in batch]
EOF_PY
PY
}

job_oom() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=embed-cache
#SBATCH --mem=100M
exec /usr/bin/python3 - <<'EOF_PY'
import time
cache = []
for step in range(1, 1000):
    cache.append(bytearray(8 * 1024 * 1024))
    print(f"step {step}: cached {8 * step} MiB of embeddings", flush=True)
    time.sleep(0.02)
EOF_PY
PY
}

job_nan() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=lm-finetune
/usr/bin/python3 - <<'EOF_PY'
# A learning rate far too high: the weight grows ~600x per step until the
# loss overflows to inf and then nan; the loop runs on and exits 0.
w, lr = 1.0, 3.0
for step in range(1, 131):
    loss = w * w * 100.0
    w -= lr * 200.0 * w
    if step % 10 == 0 or loss != loss:
        print(f"step {step:3d} | loss {loss:.4g} | lr {lr}", flush=True)
print("training finished")
EOF_PY
PY
}

job_segfault() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=custom-op
echo "loading the custom kernel extension"
/usr/bin/python3 -X faulthandler -c 'import ctypes; print("calling op", flush=True); ctypes.string_at(0)'
PY
}

job_import() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=eval-bleu
/usr/bin/python3 -c 'import sacrebleu_metrics_v2' 2>&1
PY
}

job_ok() {
	cat <<'PY'
#!/bin/bash
#SBATCH --job-name=preprocess
for i in 1 2 3; do echo "shard $i/3 done"; sleep 0.1; done
PY
}

DEMO_JOBS="keyerror oom nan segfault import ok"
