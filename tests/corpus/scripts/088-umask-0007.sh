#!/bin/bash
#PBS -N molgenis_step
#PBS -q workq
#PBS -l nodes=1:ppn=4
#PBS -l walltime=05:59:00
#PBS -l mem=6gb
#PBS -e molgenis_step.err
#PBS -o molgenis_step.out
#PBS -W umask=0007
source transfer.sh
