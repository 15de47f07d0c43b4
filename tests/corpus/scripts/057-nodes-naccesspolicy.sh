#!/bin/bash
#PBS -N j-1.1
#PBS -l nodes=1:ppn=24
#PBS -l naccesspolicy=singlejob
#PBS -o ../workflow/job-1.1_${PBS_JOBID}.out
./run
