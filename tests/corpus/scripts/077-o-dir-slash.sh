#!/bin/bash
#PBS -N bsamp
#PBS -o log/
#PBS -e log/
#PBS -l mem=4G
#PBS -l vmem=4G
#PBS -l walltime=6:00:00
#PBS -l nodes=1:ppn=4
mkdir -p log/
