#!/bin/bash
#PBS -N hello_world

## Request 16 CPU cores on 1 nodes
#PBS -l nodes=1:ppn=16,mem=10gb,feature=16core,walltime=1:00:00

#PBS -o /tmp
#PBS -j oe
#PBS -d /tmp
#PBS -W group_list=hyak-motley
##PBS -W group_list=hyak-stf
./test
