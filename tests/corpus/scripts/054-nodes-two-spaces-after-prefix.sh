#!/bin/bash

#PBS  -o BATCH_OUTPUT 
#PBS  -e BATCH_ERRORS 

#PBS -lnodes=1:ppn=1:gpu,walltime=4:00:00
cd $PBS_O_WORKDIR
R CMD BATCH --vanilla paschold.R
