#!/bin/sh -login

#
# This file is part of a project.
#

#PBS -l nodes=1:ppn=1,walltime=4:00:00,mem=4gb
#PBS -j oe
cd /tmp
