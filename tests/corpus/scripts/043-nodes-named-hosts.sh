#!/bin/bash
#PBS -l nodes=node1:ppn=1+node2:ppn=1
#PBS -l walltime=00:10:00
mpirun ./a.out
