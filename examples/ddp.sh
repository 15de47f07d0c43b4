#!/bin/bash
#PBS -N ddp
#PBS -l nodes=2:ppn=2
#PBS -l walltime=00:10:00
# PyTorch DDP over two nodes on CPU (gloo), no ssh: pbsdsh -u starts one torchrun per node
# through the moms, each torchrun starts 2 ranks (examples/ddp.py). The c10d rendezvous on the
# mother superior gives each node its rank, so no --node-rank is needed; MASTER_ADDR and
# MASTER_PORT come from the job environment (the first node and a port reserved for the job).
# torch: TORCH_VENV (qsub -v TORCH_VENV=$HOME/torch) names a virtualenv that has it; otherwise
# torchrun is looked up in PATH.
cd "$PBS_O_WORKDIR" || exit 1
torchrun=${TORCH_VENV:+$TORCH_VENV/bin/}torchrun
master=${MASTER_ADDR:-$(head -n 1 "$PBS_NODEFILE")}
pbsdsh -u -- "$torchrun" --nnodes="$PBS_NUM_NODES" --nproc-per-node=2 \
    --rdzv-backend=c10d --rdzv-endpoint="$master:${MASTER_PORT:-29400}" --rdzv-id="$PBS_JOBID" \
    "$PWD/ddp.py"
