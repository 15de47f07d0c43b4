#!/bin/bash
#PBS -V
#PBS -q fill
#PBS -l nodes=1:ppn=8
#PBS -l pmem=3500mb
#PBS -t 1-25%25
#PBS -j oe
cd ${PBS_O_WORKDIR}
matlab -nodisplay -r 'run p_${PBS_ARRAYID}.m; exit'
