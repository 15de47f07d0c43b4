#!/bin/bash

## set name of PBS job
#PBS -N job_array_example
#PBS -J 1-10
#PBS -V
#PBS -q route
#PBS -l walltime=00:10:00
#PBS -l select=1:ncpus=1
#PBS -e /tmp/corpus-out
