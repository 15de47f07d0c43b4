#!/bin/bash
#PBS -l select=1:ncpus=1:mem=50gb:cpu_type=rome
#PBS -l walltime=24:0:0
#PBS -N main.run1
#PBS -j oe
#PBS -o logs/log-run1.txt

cat <<EOF > input.txt
#PBS -q never_read
value 1
EOF
cd $PBS_O_WORKDIR
