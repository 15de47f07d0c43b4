#!/bin/bash

#PBS -l nodes=1:ppn=1
#PBS -l mem=4gb
#PBS -l walltime=24:00:00
#PBS -q short
#PBS -t 1-22
#PBS -j oe
#PBS -o log/$PBS_JOBID.log
cd $PBS_O_WORKDIR
