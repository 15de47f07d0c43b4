#!/bin/bash
#PBS -o pbs_out.dat
#PBS -e pbs_err.dat
#PBS -M someone@fiocruz.br
#PBS -m e
### Number of nodes and number of processors per node
#PBS -l nodes=1:ppn=20#shared
cd $PBS_O_WORKDIR
