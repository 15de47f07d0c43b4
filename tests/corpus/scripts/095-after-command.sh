#!/bin/bash
#PBS -N before_cmd
cd $PBS_O_WORKDIR
#PBS -l walltime=99:00:00
#PBS -q never
echo run
