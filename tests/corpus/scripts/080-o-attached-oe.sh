#!/bin/bash
#PBS -l walltime=48:00:00
#PBS -l nodes=1:ppn=20:scivybridge
#PBS -l pmem=10gb
##PBS -A alloc_default
#PBS -A open
#PBS -N JOB_NAME
#PBS -oe
##PBS -m be
