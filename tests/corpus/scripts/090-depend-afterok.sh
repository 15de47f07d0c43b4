#!/bin/sh
#PBS -N test_wait_for_pbs
#PBS -o wait.out
#PBS -e wait.err
#PBS -V
#PBS -l walltime=0:01:00
#PBS -l nodes=1:ppn=16
#PBS -A yeo-group
#PBS -q home-yeo
#PBS -W depend=afterok:@PARENT@
cd $PBS_O_WORKDIR
