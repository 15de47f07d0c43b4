#!/bin/bash
#PBS -N qcjob
#PBS -q queue_name
#PBS -l nodes=1:ppn=16
#PBS -V
#PBS -l walltime=24:00:00
#PBS -l mem=8gb
#PBS -t 1-9%30
set -x
