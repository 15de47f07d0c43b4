#!/bin/bash
##PBS -d . 
##PBS -l walltime=3:00:00
##PBS -t 1-1000%10
#PBS -N slim_run
MASTER=
