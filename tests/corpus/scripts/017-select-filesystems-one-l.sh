#!/bin/bash
#PBS -l select=2:ncpus=64:ngpus=4,walltime=01:00:00,filesystems=home:eagle:grand
#PBS -q debug
#PBS -A datascience
./run
