#!/bin/bash
#PBS -N pipeline
#PBS -l nodes=1:ppn=8
#PBS -o pipeline.out
#PBS -e pipeline.err
#PBS -V
#PBS -q home-yeo
#PBS -W group_list=yeo-group
#PBS -t 1-16
#PBS -l walltime=48:00:00
